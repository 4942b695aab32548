module github.com/placement-syncd/placement-syncd

go 1.26.8

require (
	github.com/mattn/go-sqlite3 v1.14.53
	go.uber.org/goleak v1.3.0
	go.uber.org/zap v1.28.0
	golang.org/x/sync v0.24.0
	gopkg.in/yaml.v3 v3.0.1
)

require (
	github.com/gophercloud/gophercloud/v2 v2.15.0 // indirect
	github.com/prometheus/client_golang v1.25.0 // indirect
	go.uber.org/multierr v1.10.0 // indirect
	gopkg.in/yaml.v2 v2.4.0 // indirect
)
