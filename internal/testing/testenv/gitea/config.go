/*
Copyright 2026 The bg-gitops Authors.

Licensed under the Apache License, Version 2.0.
*/

// config.go: writeConfig: Gitea's minimal app.ini and an empty global git
// config.

package gitea

import (
	"bytes"
	"crypto/rand"
	"encoding/hex"
	"os"
	"os/user"
	"path/filepath"
	"text/template"
)

// appINI is a minimal, fast-starting configuration: sqlite, no SSH, no
// mailer, no indexers, no cron, in-memory queues (webhooks are delivered as
// soon as a worker picks them up), webhooks allowed to loopback only.
var appINI = template.Must(template.New("app.ini").Parse(`APP_NAME = bg-gitops test forge
RUN_MODE = prod
RUN_USER = {{.RunUser}}
WORK_PATH = {{.Dir}}
I_AM_BEING_UNSAFE_RUNNING_AS_ROOT = true

[server]
PROTOCOL = http
HTTP_ADDR = 127.0.0.1
HTTP_PORT = {{.Port}}
DOMAIN = 127.0.0.1
ROOT_URL = http://127.0.0.1:{{.Port}}/
APP_DATA_PATH = {{.Dir}}/data
STATIC_ROOT_PATH = {{.StaticRoot}}
OFFLINE_MODE = true
DISABLE_SSH = true
START_SSH_SERVER = false
LFS_START_SERVER = false

[database]
DB_TYPE = sqlite3
PATH = {{.Dir}}/data/gitea.db
SQLITE_JOURNAL_MODE = WAL

[repository]
ROOT = {{.Dir}}/repos
DEFAULT_BRANCH = main

[security]
INSTALL_LOCK = true
SECRET_KEY = {{.SecretKey}}
INTERNAL_TOKEN = {{.InternalToken}}
PASSWORD_HASH_ALGO = pbkdf2_v1

[oauth2]
ENABLED = false

[service]
DISABLE_REGISTRATION = true
ENABLE_NOTIFY_MAIL = false

[mailer]
ENABLED = false

[indexer]
ISSUE_INDEXER_TYPE = db
REPO_INDEXER_ENABLED = false

[queue]
TYPE = channel

[webhook]
ALLOWED_HOST_LIST = loopback
DELIVER_TIMEOUT = 5

[cron]
ENABLED = false

[cron.update_checker]
ENABLED = false

[actions]
ENABLED = false

[packages]
ENABLED = false

[session]
PROVIDER = memory

[cache]
ADAPTER = memory

[git]
HOME_PATH = {{.Dir}}/home

[log]
MODE = console
LEVEL = Warn
ROOT_PATH = {{.Dir}}/log
`))

type iniValues struct {
	RunUser, Dir, StaticRoot string
	SecretKey, InternalToken string
	Port                     int
}

// writeConfig writes app.ini, an empty global git config and the home
// directory. Called once per data directory; a restart reuses the file.
func writeConfig(dir, static string, port int) (string, error) {
	path := filepath.Join(dir, "app.ini")
	if _, err := os.Stat(path); err == nil {
		return path, nil
	}
	for _, d := range []string{"data", "repos", "home", "log"} {
		if err := os.MkdirAll(filepath.Join(dir, d), 0o700); err != nil {
			return "", err
		}
	}
	// Never /dev/null: Gitea runs `git config --global` and git replaces
	// the file by lock-and-rename.
	if err := os.WriteFile(gitConfigPath(dir), nil, 0o600); err != nil {
		return "", err
	}
	u, err := user.Current()
	if err != nil {
		return "", err
	}
	v := iniValues{RunUser: u.Username, Dir: dir, StaticRoot: static, Port: port,
		SecretKey: randomHex(32), InternalToken: randomHex(64)}
	var buf bytes.Buffer
	if err := appINI.Execute(&buf, v); err != nil {
		return "", err
	}
	return path, os.WriteFile(path, buf.Bytes(), 0o600)
}

func gitConfigPath(dir string) string { return filepath.Join(dir, "gitconfig") }

func randomHex(n int) string {
	b := make([]byte, n/2)
	_, _ = rand.Read(b)
	return hex.EncodeToString(b)
}
