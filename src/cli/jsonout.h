/*
 * jsonout.h - JSON strings for report --format json and the HTML page.
 */
#ifndef PROFIL_CLI_JSONOUT_H
#define PROFIL_CLI_JSONOUT_H

#include <stdio.h>

/*
 * s as a JSON string, quotes included.  For a page (html), '<' is
 * escaped too, so that no "</script>" ends the data early, and bytes
 * that are not UTF-8 become U+FFFD, so that the page stays valid.
 */
void json_string(FILE *f, const char *s, int html);

#endif
