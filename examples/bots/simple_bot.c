/* A sichuan-bot/1 bot in C (docs/protocol.md): reads one JSON message per line on stdin,
 * answers on stdout. Stateless: every request carries the seat's whole view.
 *
 * Strategy: declare Hu when legal; choose as forbidden suit the suit with the fewest
 * tiles; on its turn discard the tile with the fewest neighbours (tiles of its suit at
 * most two ranks away) in hand; pass every claim.
 *
 * Build: cc -O2 -o simple_bot simple_bot.c      Run: exec:./simple_bot?tables=64
 *
 * It reads only two fields, "legal" and "view"."hand", with a small scanner (no JSON
 * library): both are arrays of strings without escapes. */
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#define MAX_LINE (1 << 20)
#define MAX_ITEMS 128

static char line[MAX_LINE];

/* Copy up to MAX_ITEMS strings of the array that follows `"key":` into out (each at
 * most 15 chars); returns how many. */
static int string_array(const char *json, const char *key, char out[][16]) {
    char pattern[64];
    snprintf(pattern, sizeof pattern, "\"%s\":[", key);
    const char *p = strstr(json, pattern);
    int n = 0;
    if (!p) return 0;
    p += strlen(pattern);
    while (*p && *p != ']' && n < MAX_ITEMS) {
        if (*p == '"') {
            const char *end = strchr(p + 1, '"');
            if (!end) break;
            size_t len = (size_t)(end - p - 1);
            if (len > 15) len = 15;
            memcpy(out[n], p + 1, len);
            out[n][len] = 0;
            n++;
            p = end + 1;
        } else {
            p++;
        }
    }
    return n;
}

/* "5m" -> 0..26 (suit * 9 + rank - 1), -1 if not a tile */
static int kind(const char *t) {
    const char *suits = "mps";
    const char *s = t[0] && t[1] ? strchr(suits, t[1]) : NULL;
    if (t[0] < '1' || t[0] > '9' || !s || t[2]) return -1;
    return (int)(s - suits) * 9 + (t[0] - '1');
}

static void answer(long id, const char *action) {
    printf("{\"id\":%ld,\"action\":\"%s\"}\n", id, action);
}

int main(void) {
    static char legal[MAX_ITEMS][16], hand[MAX_ITEMS][16];
    setvbuf(stdout, NULL, _IOFBF, 1 << 16);
    while (fgets(line, sizeof line, stdin)) {
        if (strstr(line, "\"type\":\"hello\"")) {
            printf("{\"type\":\"hello\",\"protocol\":\"sichuan-bot/1\",\"name\":\"simple-c\","
                   "\"version\":\"1\",\"tables\":64}\n");
            fflush(stdout);
            continue;
        }
        if (strstr(line, "\"type\":\"bye\"")) break;
        if (!strstr(line, "\"type\":\"request\"")) continue; /* "end" and the unknown */
        const char *idp = strstr(line, "\"id\":");
        long id = idp ? strtol(idp + 5, NULL, 10) : -1;
        const char *view = strstr(line, "\"view\":");
        int n_legal = string_array(line, "legal", legal);
        int n_hand = view ? string_array(view, "hand", hand) : 0;
        int counts[27] = {0}, per_suit[3] = {0};
        for (int i = 0; i < n_hand; i++) {
            int k = kind(hand[i]);
            if (k >= 0) { counts[k]++; per_suit[k / 9]++; }
        }
        const char *choice = n_legal ? legal[0] : "pass";
        int best = 1 << 30;
        int fewest = 0;
        for (int s = 1; s < 3; s++) if (per_suit[s] < per_suit[fewest]) fewest = s;
        for (int i = 0; i < n_legal; i++) {
            const char *a = legal[i];
            int score;
            if (strcmp(a, "hu") == 0) { choice = a; break; }
            if (strncmp(a, "void ", 5) == 0) {
                /* the fewest-tiles suit: its indicator card, else one of its tiles */
                int k = kind(a + 5);
                int suit = k >= 0 ? k / 9 : (int)(strchr("mps", a[5]) - "mps");
                score = suit == fewest ? (k < 0 ? 0 : 1) : 2;
            } else if (strncmp(a, "discard ", 8) == 0) {
                int k = kind(a + 8), r = k % 9;
                score = 0;
                for (int d = -2; d <= 2; d++)
                    if (r + d >= 0 && r + d < 9) score += counts[k + d];
                score = score - 1 + 10; /* neighbours (itself excluded), after voids */
            } else if (strcmp(a, "pass") == 0) {
                score = 0;
            } else {
                continue; /* pung, kong: not this bot's style */
            }
            if (score < best) { best = score; choice = a; }
        }
        answer(id, choice);
        fflush(stdout);
    }
    return 0;
}
