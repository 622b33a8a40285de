module lab.local/pause

go 1.22
