module github.com/cudnnfe/cudnnfe/bindings/go

go 1.19
