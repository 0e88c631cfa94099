module rivet.test/tlsclient

go 1.19
