module paddock.dev/supervisor

go 1.19
