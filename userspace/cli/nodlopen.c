// SPDX-License-Identifier: GPL-2.0
/*
 * sieve is linked static-pie (userspace/xdp/xdp.mk), and the one caller of
 * dlopen() in it is SQLite's VFS, for extensions sieve never loads. A
 * static glibc's dlopen() would need the shared glibc of the build's exact
 * version at run time, and the linker says so at every link. Linked with
 * --wrap=dlopen, that call comes here instead: no library is ever loaded,
 * and SQLite reports the failure as it would any other.
 */
#include <stddef.h>

void *__wrap_dlopen(const char *file, int mode);

void *__wrap_dlopen(const char *file, int mode)
{
	(void)file;
	(void)mode;
	return NULL;
}
