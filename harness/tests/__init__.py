"""The lab library's own tests, run as modules from the repository root (`python3 -m harness.tests.test_judge`)."""
