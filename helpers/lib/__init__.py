"""The library the student builds: pure computation, each public docstring naming its lesson."""
