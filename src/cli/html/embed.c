/*
 * embed.c - the build's tool that compiles the page's files into the
 * command: `embed NAME=FILE...` writes C source defining, for each,
 * `const char html_asset_NAME[]`, the file's bytes and a final NUL.
 * Built and run by the Makefile; never installed.
 */
#include <stdio.h>
#include <string.h>

int main(int argc, char **argv)
{
	puts("/* Made by src/cli/html/embed.c from src/cli/html/: do not edit. */");
	for (int i = 1; i < argc; i++) {
		char *eq = strchr(argv[i], '=');
		if (!eq) {
			fprintf(stderr, "embed: '%s': not NAME=FILE\n", argv[i]);
			return 2;
		}
		*eq = 0;
		FILE *f = fopen(eq + 1, "rb");
		if (!f) {
			fprintf(stderr, "embed: %s: cannot read\n", eq + 1);
			return 1;
		}
		printf("const char html_asset_%s[] = {", argv[i]);
		int c;
		unsigned long n = 0;
		while ((c = getc(f)) != EOF) {
			if (c == 0) {
				fprintf(stderr, "embed: %s: a NUL byte in the file\n", eq + 1);
				return 1;
			}
			printf("%s%d,", n++ % 24 ? "" : "\n", c);
		}
		puts("0\n};");
		fclose(f);
	}
	return fflush(stdout) != 0;
}
