#include "cli/cli.hpp"

int main(int argc, char** argv) { return preflight::cli::run(argc, argv); }
