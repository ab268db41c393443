/* assert.h: the library's internal assertion: checked in every build, it aborts with the file
 * and line of the broken invariant (an invariant that fails in production must not be skipped
 * silently into a corrupt state or a hang). */
#ifndef CSNI_ASSERT_H
#define CSNI_ASSERT_H

__attribute__((noreturn, cold)) void csni_assert_fail(const char *what, const char *file, int line);

#define CSNI_ASSERT(cond)                                                                          \
    do {                                                                                           \
        if (__builtin_expect(!(cond), 0))                                                          \
            csni_assert_fail(#cond, __FILE__, __LINE__);                                           \
    } while (0)

#endif
