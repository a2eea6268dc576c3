"""Shared fixtures of the Python tests: the tagflow command (for C++ results to compare
against) and a scratch folder."""

import os
import pathlib
import subprocess

import pytest


@pytest.fixture
def cli():
    program = os.environ.get("TAGFLOW_CLI")
    if not program:
        pytest.fail("TAGFLOW_CLI (the tagflow program) is not set; ctest sets it")

    def run(*args):
        subprocess.run([program, *map(str, args)], check=True, capture_output=True)
    return run


@pytest.fixture
def scratch(tmp_path) -> pathlib.Path:
    return tmp_path
