/* greedy.c: a greedy Escoba Arena bot in C (protocol 1, docs/PROTOCOL.md). No dependencies.
 * Build: cc -O2 -o bots/c/greedy.bin bots/c/greedy.c     Run: bots/c/greedy.bin
 *
 * It takes the best capture (an escoba, then the siete de oros, sevens, oros, cards); with
 * none it trails the card that leaves the table hardest to sweep (a table adding up to
 * 5..14 can be swept by one card) and gives away the least. Like firstmove.c it reads only
 * the request line: the arena writes each message on one line, and a request names "table"
 * (in its view) and "legal" once each.
 */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAXC 48

typedef struct { int value, oro, seven, velo; } Card;

/* "12c" -> its capture value and flags; returns the characters read (0: not a card). */
static int parse_card(const char *s, Card *c) {
    char *end;
    long rank = strtol(s, &end, 10);
    static const int value[13] = {0, 1, 2, 3, 4, 5, 6, 7, 0, 0, 8, 9, 10};
    if (end == s || rank < 1 || rank > 12 || !value[rank] || !strchr("oceb", *end) || !*end) return 0;
    c->value = value[rank];
    c->oro = *end == 'o';
    c->seven = rank == 7;
    c->velo = c->oro && c->seven;
    return (int)(end - s) + 1;
}

/* The JSON string array after "key":[ -> up to max strings copied into out (each < 32 chars). */
static int string_array(const char *line, const char *key, char out[][32], int max) {
    const char *p = strstr(line, key);
    int n = 0;
    if (!p || !(p = strchr(p, '['))) return 0;
    for (p++; *p && *p != ']' && n < max; ) {
        const char *q, *r;
        if (*p != '"') { p++; continue; }
        q = p + 1;
        r = strchr(q, '"');
        if (!r || r - q >= 32) break;
        memcpy(out[n], q, (size_t)(r - q));
        out[n][r - q] = 0;
        n++;
        p = r + 1;
    }
    return n;
}

/* Score a move: bigger is better. Captures always beat trails. */
static long score(const char *move, int table_n, int table_sum) {
    Card cards[8];
    int n = 0, k;
    const char *p = move;
    if (!strcmp(move, "pass")) return -1000000;
    if (!strncmp(p, "renuncio ", 9)) p += 9;
    if (!strncmp(p, "mesa ", 5)) p += 5;
    while (*p && n < 8 && (k = parse_card(p, &cards[n])) > 0) {
        n++;
        p += k;
        if (*p == '+') p++;
    }
    if (n == 0) return -1000000;
    if (n == 1 && move[0] != 'm') {   /* a trail */
        int left = table_sum + cards[0].value;
        int exposed = left >= 5 && left <= 14;
        return -(exposed * 1000 + cards[0].velo * 100 + cards[0].seven * 20 + cards[0].oro * 10 + cards[0].value);
    }
    {
        int from_table = move[0] == 'm' || move[0] == 'r' ? n : n - 1, i;
        long velo = 0, sevens = 0, oros = 0;
        for (i = 0; i < n; i++) {
            velo += cards[i].velo;
            sevens += cards[i].seven;
            oros += cards[i].oro;
        }
        return 1000000 + (from_table == table_n) * 100000 + velo * 10000 + sevens * 1000 + oros * 100 + n;
    }
}

int main(void) {
    char *line = NULL;
    size_t cap = 0;
    static char legal[256][32], table[MAXC][32];
    while (getline(&line, &cap, stdin) > 0) {
        if (strstr(line, "\"type\":\"request\"")) {
            char *id = strstr(line, "\"id\":");
            int n_legal = string_array(line, "\"legal\":", legal, 256);
            int n_table = string_array(line, "\"table\":", table, MAXC), i, best = 0, sum = 0;
            long best_score = 0;
            Card c;
            if (!id || n_legal == 0) continue;
            for (i = 0; i < n_table; i++) if (parse_card(table[i], &c)) sum += c.value;
            for (i = 0; i < n_legal; i++) {
                long s = score(legal[i], n_table, sum);
                if (i == 0 || s > best_score) { best = i; best_score = s; }
            }
            printf("{\"type\":\"move\",\"id\":%ld,\"move\":\"%s\"}\n", strtol(id + 5, NULL, 10), legal[best]);
            fflush(stdout);
        } else if (strstr(line, "\"type\":\"hello\"") || strstr(line, "\"type\":\"new_match\"")) {
            fputs("{\"type\":\"ready\",\"name\":\"greedy.c\",\"protocol\":1}\n", stdout);
            fflush(stdout);
        } else if (strstr(line, "\"type\":\"goodbye\"")) {
            break;
        }
    }
    free(line);
    return 0;
}
