module paddock.dev/host-commands

go 1.19
