/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// credentials.go: writeCredentials: the serving certificate, admin token
// and service-account key the API server reads, and the administrator's
// kubeconfig.

package plane

import (
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"sort"
	"strconv"
	"strings"

	"k8s.io/client-go/rest"
	"k8s.io/client-go/tools/clientcmd"
	clientcmdapi "k8s.io/client-go/tools/clientcmd/api"
	certutil "k8s.io/client-go/util/cert"
	"k8s.io/client-go/util/keyutil"
)

// credentials are the files the API server reads and the admin's config.
type credentials struct {
	servingCert, servingKey, tokens, saKey string
	kubeconfig                             string
	config                                 *rest.Config
	users                                  map[string]string // name to token
}

// writeCredentials writes, once per directory, a serving certificate for
// 127.0.0.1, an admin token and a service-account key: a restarted API
// server reads the same files, so every client stays valid.
func writeCredentials(dir string, port int, o Options) (credentials, error) {
	certs := filepath.Join(dir, "pki")
	if err := ensureDir(certs); err != nil {
		return credentials{}, err
	}
	c := credentials{servingCert: filepath.Join(certs, "apiserver.crt"), servingKey: filepath.Join(certs, "apiserver.key"),
		tokens: filepath.Join(certs, "tokens.csv"), saKey: filepath.Join(certs, "sa.key"),
		kubeconfig: filepath.Join(dir, "kubeconfig")}
	ips := append([]net.IP{net.ParseIP("127.0.0.1")}, o.ServingIPs...)
	cert, key, err := certutil.GenerateSelfSignedCertKey("127.0.0.1", ips, append([]string{"localhost"}, o.ServingNames...))
	if err != nil {
		return c, fmt.Errorf("serving certificate: %w", err)
	}
	saKey, err := keyutil.MakeEllipticPrivateKeyPEM()
	if err != nil {
		return c, fmt.Errorf("service-account key: %w", err)
	}
	token := randomHex(32)
	tokens := token + ",admin,admin,system:masters\n"
	names := make([]string, 0, len(o.Users))
	for name := range o.Users {
		names = append(names, name)
	}
	sort.Strings(names)
	c.users = map[string]string{}
	for _, name := range names {
		c.users[name] = randomHex(32)
		line := c.users[name] + "," + name + "," + name
		if groups := o.Users[name]; len(groups) > 0 {
			line += `,"` + strings.Join(groups, ",") + `"`
		}
		tokens += line + "\n"
	}
	files := map[string][]byte{c.servingCert: cert, c.servingKey: key, c.saKey: saKey, c.tokens: []byte(tokens)}
	for path, data := range files {
		if err := os.WriteFile(path, data, 0o600); err != nil {
			return c, err
		}
	}
	c.config = &rest.Config{Host: "https://127.0.0.1:" + strconv.Itoa(port), BearerToken: token,
		TLSClientConfig: rest.TLSClientConfig{CAData: cert}}
	return c, writeKubeconfig(c.kubeconfig, c.config)
}

func writeKubeconfig(path string, cfg *rest.Config) error {
	kc := clientcmdapi.NewConfig()
	kc.Clusters["plane"] = &clientcmdapi.Cluster{Server: cfg.Host, CertificateAuthorityData: cfg.CAData}
	kc.AuthInfos["admin"] = &clientcmdapi.AuthInfo{Token: cfg.BearerToken}
	kc.Contexts["admin"] = &clientcmdapi.Context{Cluster: "plane", AuthInfo: "admin"}
	kc.CurrentContext = "admin"
	return clientcmd.WriteToFile(*kc, path)
}

func randomHex(n int) string {
	b := make([]byte, n/2)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
