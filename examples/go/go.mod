module github.com/cudnnfe/cudnnfe/examples/go

go 1.19

require github.com/cudnnfe/cudnnfe/bindings/go v0.0.0

replace github.com/cudnnfe/cudnnfe/bindings/go => ../../bindings/go
