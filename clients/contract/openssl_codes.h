// OpenSSL 3.0's numbers the lab's details are written in (clients/README.md "Outcomes"), for the
// adapters whose library is not OpenSSL: X509_V_ERR_* (x509_vfy.h) and ERR_PACK of a library and
// reason (err.h). Only the ones an adapter maps onto are here.
#pragma once

namespace contract {

namespace x509 {  // OpenSSL 3.0 x509_vfy.h
constexpr long unspecified = 1;
constexpr long unable_to_get_issuer = 2;
constexpr long signature_failure = 7;
constexpr long crl_signature_failure = 8;
constexpr long not_yet_valid = 9;
constexpr long expired = 10;
constexpr long crl_not_yet_valid = 11;
constexpr long crl_has_expired = 12;
constexpr long depth_zero_self_signed = 18;
constexpr long self_signed_in_chain = 19;
constexpr long unable_to_get_issuer_locally = 20;
constexpr long revoked = 23;
constexpr long path_length_exceeded = 25;
constexpr long invalid_purpose = 26;
constexpr long unhandled_critical_extension = 34;
constexpr long permitted_violation = 47;
constexpr long excluded_violation = 48;
constexpr long hostname_mismatch = 62;
constexpr long ip_address_mismatch = 64;
constexpr long ee_key_too_small = 66;
constexpr long ca_key_too_small = 67;
constexpr long ca_md_too_weak = 68;
constexpr long ocsp_verify_needed = 73;
constexpr long ocsp_verify_failed = 74;
constexpr long invalid_ca = 79;  // X509_V_ERR_INVALID_CA in OpenSSL 3 (24 is NO_ISSUER_PUBLIC_KEY)
}  // namespace x509

constexpr long err_lib_ssl = 20;             // ERR_LIB_SSL
constexpr long err_lib_user = 128;           // ERR_LIB_USER: a library code with no OpenSSL counterpart
constexpr long ssl_ad_reason_offset = 1000;  // SSL_AD_REASON_OFFSET: SSL_R_ for alert N is 1000 + N
constexpr long ssl_r_wrong_version_number = 267;
constexpr long packed(long lib, long reason) { return (lib << 23) | reason; }

}  // namespace contract
