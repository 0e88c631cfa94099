// rivet's version. This header is the only place it is written: CMake reads the three numbers
// from here for project(VERSION), the package's version file and rivet.pc.
#pragma once

#define RIVET_VERSION_MAJOR 0
#define RIVET_VERSION_MINOR 1
#define RIVET_VERSION_PATCH 0

// "MAJOR.MINOR.PATCH", spelled from the numbers above so that it cannot disagree with them.
#define RIVET_VERSION_STRINGIFY_(x) #x
#define RIVET_VERSION_STRINGIFY(x) RIVET_VERSION_STRINGIFY_(x)
#define RIVET_VERSION_STRING                                                      \
    RIVET_VERSION_STRINGIFY(RIVET_VERSION_MAJOR)                                  \
    "." RIVET_VERSION_STRINGIFY(RIVET_VERSION_MINOR) "." RIVET_VERSION_STRINGIFY( \
        RIVET_VERSION_PATCH)
