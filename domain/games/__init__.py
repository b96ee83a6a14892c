"""The games Daedalus hosts, one module (or package) each."""
