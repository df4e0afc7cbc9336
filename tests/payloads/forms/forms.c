/* A block comment
   over two lines. */
#include <stdio.h>

#define SQUARE(x) ((x) * (x))

// A free function.
int add(int a, int b) {
    return a + b; // trailing comment keeps the line code
}

static const char *
name_of(int code)
{
    return code ? "yes" : "no";
}

int declared(int x);

/** A doc comment. */
void (*handler_for(int signal))(int) {
    return 0;
}

int main(void) {
    const char *text = "\
// not a comment: a string";
    return add(1, 2);
}
