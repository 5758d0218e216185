module github.com/seglog/seglog/bench/peers

go 1.26.8

require github.com/tidwall/wal v1.2.1

require (
	github.com/tidwall/gjson v1.10.2 // indirect
	github.com/tidwall/match v1.1.1 // indirect
	github.com/tidwall/pretty v1.2.0 // indirect
	github.com/tidwall/tinylru v1.1.0 // indirect
)
