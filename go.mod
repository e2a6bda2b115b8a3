module github.com/askops/askops

go 1.26
