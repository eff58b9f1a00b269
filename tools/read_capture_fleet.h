/* read_capture_fleet.h - read_capture's many-capture modes. */
#ifndef READ_CAPTURE_FLEET_H
#define READ_CAPTURE_FLEET_H

/* 1 when argv asks for --summary or --export (before any "--"). */
int fleet_wanted(int argc, char **argv);

/* read_capture --summary / --export; returns the exit status. */
int fleet_main(int argc, char **argv);

#endif
