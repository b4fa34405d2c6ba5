/* main.c - placeholder entry point while the core is assembled. */
int main(void) { return 0; }
