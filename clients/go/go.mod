module tlslab/clients/go

go 1.19
