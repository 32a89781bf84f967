/* firstmove: the smallest correct Escoba Arena bot (protocol 1, docs/PROTOCOL.md).
 * It answers every request with the first legal move. No dependencies.
 * Build: cc -O2 -o bots/c/firstmove.bin bots/c/firstmove.c
 *
 * It does not parse JSON in general: it relies only on the arena writing each message on
 * one line, and on "id" and "legal" appearing once in a request (nested events never carry
 * those names).
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

int main(void) {
    char *line = NULL;
    size_t cap = 0;
    while (getline(&line, &cap, stdin) > 0) {
        if (strstr(line, "\"type\":\"request\"")) {
            char *id = strstr(line, "\"id\":");
            char *legal = strstr(line, "\"legal\":[\"");
            if (!id || !legal) continue;
            long n = strtol(id + 5, NULL, 10);
            char *move = legal + 10;
            char *end = strchr(move, '"');
            if (!end) continue;
            printf("{\"type\":\"move\",\"id\":%ld,\"move\":\"%.*s\"}\n", n, (int)(end - move), move);
            fflush(stdout);
        } else if (strstr(line, "\"type\":\"hello\"") || strstr(line, "\"type\":\"new_match\"")) {
            fputs("{\"type\":\"ready\",\"name\":\"firstmove.c\",\"protocol\":1}\n", stdout);
            fflush(stdout);
        } else if (strstr(line, "\"type\":\"goodbye\"")) {
            break;
        }
    }
    free(line);
    return 0;
}
