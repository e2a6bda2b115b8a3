package config

import (
	"crypto/tls"
	"fmt"
)

// TLSFiles are a listener's certificate chain and key, PEM files: with
// both its section (console, http) serves HTTPS; with neither, plain HTTP.
// console and http read and check them here, so both refuse a half pair
// or a bad file alike.
type TLSFiles struct {
	TLSCert string `yaml:"tls_cert"`
	TLSKey  string `yaml:"tls_key"`
}

// load is the TLS configuration of section's tls_cert and tls_key; nil
// when neither is set. It reads the files, so a bad pair is an error
// here, at start, not at the first client's handshake.
func (f TLSFiles) load(section string) (*tls.Config, error) {
	if f.TLSCert == "" && f.TLSKey == "" {
		return nil, nil
	}
	if f.TLSCert == "" || f.TLSKey == "" {
		return nil, fmt.Errorf("set both %s.tls_cert and %s.tls_key, or neither", section, section)
	}
	pair, err := tls.LoadX509KeyPair(f.TLSCert, f.TLSKey)
	if err != nil {
		return nil, fmt.Errorf("%s.tls_cert/tls_key: %w", section, err)
	}
	return &tls.Config{Certificates: []tls.Certificate{pair}, MinVersion: tls.VersionTLS12}, nil
}

// problems are load's refusal as a Problem naming the key at fault: the
// missing half, else tls_cert.
func (f TLSFiles) problems(section string) Problems {
	_, err := f.load(section)
	if err == nil {
		return nil
	}
	key := section + ".tls_cert"
	if f.TLSCert != "" && f.TLSKey == "" {
		key = section + ".tls_key"
	}
	return Problems{{Key: key, Msg: err.Error()}}
}

// LeafCertificate is the DER certificate t presents (its first chain's
// first), nil for no TLS: what local clients pin.
func LeafCertificate(t *tls.Config) []byte {
	if t == nil || len(t.Certificates) == 0 || len(t.Certificates[0].Certificate) == 0 {
		return nil
	}
	return t.Certificates[0].Certificate[0]
}
