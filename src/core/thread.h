/* thread.h: starting the library's own threads (progress, launcher watch, PMIx name service). */
#ifndef CSNI_THREAD_H
#define CSNI_THREAD_H

#include <pthread.h>
#include <stdbool.h>
#include <stddef.h>

/* Starts fn(arg) on a new thread (detached if asked; stack 0: the default size) and returns
 * only once that thread runs fn. Blocks for the thread's start-up (microseconds). Returns 0,
 * or pthread_create's error number.
 *
 * Why wait: a program may fork right after csn_open returns, and a thread still starting up
 * may hold locks of the C library or of a sanitizer runtime (AddressSanitizer's thread
 * registry, measured: 91 of 2000 children of such a fork hung in their first pthread_create,
 * 0 of 600 once the fork waited for the thread to run). Its child would inherit them held. */
int csni_thread_start(pthread_t *th, bool detached, size_t stack, void *(*fn)(void *), void *arg);

#endif
