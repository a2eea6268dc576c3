// Nothing of its own: the object that precompiles the test headers (tests/CMakeLists.txt), so
// that the test executables reuse them without waiting for one another.
