"""Test suite of shelfie-env (a package so tests can share helpers and run as modules)."""
