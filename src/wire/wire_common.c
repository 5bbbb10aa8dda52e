/*
 * State every network wire shares with the layer above.  Here, not in one
 * wire's files, so that it links whichever wires a program brings up.
 */
#include "wire/wire.h"

volatile int wire_net_kick;
