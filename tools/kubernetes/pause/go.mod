module worklane.local/pause

go 1.21
