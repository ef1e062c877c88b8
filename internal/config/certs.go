package config

import (
	"crypto/x509"
	"fmt"
	"os"
)

// CertPool reads a PEM file of certificate authorities, as the settings redis.caFile and
// store.minio.caFile name one.
func CertPool(file string) (*x509.CertPool, error) {
	b, err := os.ReadFile(file)
	if err != nil {
		return nil, err
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(b) {
		return nil, fmt.Errorf("%s holds no PEM certificate", file)
	}
	return pool, nil
}
