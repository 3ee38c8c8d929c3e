/* emu_rt.cpp - emu.h's runtime (the launch loop, the fibers, the inline PTX
 * interpreter and the state they share), built once by emu.py and linked
 * into every unit's host program, which includes emu.h with EMU_RT_EXTERN:
 * each unit's build then compiles the unit alone (emu.h says more). */
#define EMU_RT_IMPL 1
#include "emu.h"
