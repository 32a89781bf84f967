// EscobaBot: an Escoba Arena bot in Java 17, written from docs/PROTOCOL.md alone.
//
// Run:   java bots/java/EscobaBot.java
//
// Single file, no libraries (Java's single-file source launcher compiles it on the fly).
// That compile makes start-up 1-3 s (the default handshake limit is 10 s). Faster, same
// bot:  java -XX:TieredStopAtLevel=1 -XX:+UseSerialGC bots/java/EscobaBot.java  (about 1 s),
// or compile once: javac -d build bots/java/EscobaBot.java && java -cp build EscobaBot (0.2 s).
//
// It speaks protocol 1: JSON lines on stdin/stdout, logs on stderr only, stdout flushed
// after every reply. It always answers with one of the moves the arena lists as legal,
// so the worst its strategy can do is play badly, never illegally.
//
// Strategy, in order of weight: make an escoba; take the 7 of oros; take sevens, oros and
// many cards; otherwise trail the card that leaves the table hardest to sweep for the next
// player (judged from the cards not yet seen this hand). Renuncio claims are always taken;
// at a subset15 deal the dealer takes the richest set.

import java.io.BufferedReader;
import java.io.IOException;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;

public final class EscobaBot {

    static final String NAME = "EscobaBot.java 1.0";
    static final String[] SUITS = {"o", "c", "e", "b"};
    static final int[] RANKS = {1, 2, 3, 4, 5, 6, 7, 10, 11, 12};

    // ------------------------------------------------------------------ JSON

    /** Thrown on a line that is not the JSON we can read; the line is then logged and ignored. */
    static final class JsonError extends Exception {
        JsonError(String message) {
            super(message);
        }
    }

    /**
     * A small recursive-descent JSON reader: objects become LinkedHashMap, arrays ArrayList,
     * numbers Long (or Double when they have a fraction or exponent), plus String, Boolean
     * and null. Handles every string escape, including UTF-16 surrogate pairs in \\u form.
     */
    static final class Json {
        private final String s;
        private int i;

        private Json(String s) {
            this.s = s;
        }

        static Object parse(String text) throws JsonError {
            Json p = new Json(text);
            p.ws();
            Object v = p.value();
            p.ws();
            if (p.i != p.s.length()) {
                throw new JsonError("trailing characters at " + p.i);
            }
            return v;
        }

        private void ws() {
            while (i < s.length()) {
                char c = s.charAt(i);
                if (c == ' ' || c == '\t' || c == '\r' || c == '\n') {
                    i++;
                } else {
                    break;
                }
            }
        }

        private char peek() throws JsonError {
            if (i >= s.length()) {
                throw new JsonError("unexpected end of line");
            }
            return s.charAt(i);
        }

        private void expect(char c) throws JsonError {
            if (peek() != c) {
                throw new JsonError("expected '" + c + "' at " + i);
            }
            i++;
        }

        private Object value() throws JsonError {
            char c = peek();
            switch (c) {
                case '{':
                    return object();
                case '[':
                    return array();
                case '"':
                    return string();
                case 't':
                    literal("true");
                    return Boolean.TRUE;
                case 'f':
                    literal("false");
                    return Boolean.FALSE;
                case 'n':
                    literal("null");
                    return null;
                default:
                    if (c == '-' || (c >= '0' && c <= '9')) {
                        return number();
                    }
                    throw new JsonError("unexpected '" + c + "' at " + i);
            }
        }

        private void literal(String word) throws JsonError {
            if (!s.startsWith(word, i)) {
                throw new JsonError("bad literal at " + i);
            }
            i += word.length();
        }

        private Map<String, Object> object() throws JsonError {
            Map<String, Object> m = new LinkedHashMap<>();
            expect('{');
            ws();
            if (peek() == '}') {
                i++;
                return m;
            }
            while (true) {
                ws();
                String key = string();
                ws();
                expect(':');
                ws();
                m.put(key, value());
                ws();
                char c = peek();
                i++;
                if (c == '}') {
                    return m;
                }
                if (c != ',') {
                    throw new JsonError("expected ',' or '}' at " + (i - 1));
                }
            }
        }

        private List<Object> array() throws JsonError {
            List<Object> a = new ArrayList<>();
            expect('[');
            ws();
            if (peek() == ']') {
                i++;
                return a;
            }
            while (true) {
                ws();
                a.add(value());
                ws();
                char c = peek();
                i++;
                if (c == ']') {
                    return a;
                }
                if (c != ',') {
                    throw new JsonError("expected ',' or ']' at " + (i - 1));
                }
            }
        }

        private String string() throws JsonError {
            expect('"');
            StringBuilder b = new StringBuilder();
            while (true) {
                char c = peek();
                i++;
                if (c == '"') {
                    return b.toString();
                }
                if (c != '\\') {
                    b.append(c);
                    continue;
                }
                char e = peek();
                i++;
                switch (e) {
                    case '"': b.append('"'); break;
                    case '\\': b.append('\\'); break;
                    case '/': b.append('/'); break;
                    case 'b': b.append('\b'); break;
                    case 'f': b.append('\f'); break;
                    case 'n': b.append('\n'); break;
                    case 'r': b.append('\r'); break;
                    case 't': b.append('\t'); break;
                    case 'u':
                        if (i + 4 > s.length()) {
                            throw new JsonError("short \\u escape at " + i);
                        }
                        try {
                            // A surrogate pair arrives as two \\u escapes; appending both
                            // UTF-16 units in order rebuilds the code point.
                            b.append((char) Integer.parseInt(s.substring(i, i + 4), 16));
                        } catch (NumberFormatException ex) {
                            throw new JsonError("bad \\u escape at " + i);
                        }
                        i += 4;
                        break;
                    default:
                        throw new JsonError("bad escape at " + (i - 1));
                }
            }
        }

        private Object number() throws JsonError {
            int start = i;
            if (peek() == '-') {
                i++;
            }
            boolean integral = true;
            while (i < s.length()) {
                char c = s.charAt(i);
                if (c >= '0' && c <= '9') {
                    i++;
                } else if (c == '.' || c == 'e' || c == 'E' || c == '+' || c == '-') {
                    integral = false;
                    i++;
                } else {
                    break;
                }
            }
            String t = s.substring(start, i);
            try {
                if (integral) {
                    return Long.parseLong(t);
                }
                return Double.parseDouble(t);
            } catch (NumberFormatException ex) {
                // An integer too big for a long is still a number; keep it as a double.
                try {
                    return Double.parseDouble(t);
                } catch (NumberFormatException ex2) {
                    throw new JsonError("bad number '" + t + "'");
                }
            }
        }

        /** A JSON string literal for s, escaping what JSON requires. */
        static String quote(String s) {
            StringBuilder b = new StringBuilder("\"");
            for (int k = 0; k < s.length(); k++) {
                char c = s.charAt(k);
                switch (c) {
                    case '"': b.append("\\\""); break;
                    case '\\': b.append("\\\\"); break;
                    case '\n': b.append("\\n"); break;
                    case '\r': b.append("\\r"); break;
                    case '\t': b.append("\\t"); break;
                    default:
                        if (c < 0x20) {
                            b.append(String.format("\\u%04x", (int) c));
                        } else {
                            b.append(c);
                        }
                }
            }
            return b.append('"').toString();
        }
    }

    // Typed accessors over the parsed maps: a missing or mistyped field gives the default,
    // because the arena may add fields and we must not die on a shape we did not expect.

    @SuppressWarnings("unchecked")
    static Map<String, Object> obj(Object o) {
        return o instanceof Map ? (Map<String, Object>) o : new LinkedHashMap<>();
    }

    @SuppressWarnings("unchecked")
    static List<Object> arr(Object o) {
        return o instanceof List ? (List<Object>) o : new ArrayList<>();
    }

    static String str(Object o, String dflt) {
        return o instanceof String ? (String) o : dflt;
    }

    static long num(Object o, long dflt) {
        return o instanceof Number ? ((Number) o).longValue() : dflt;
    }

    static boolean bool(Object o, boolean dflt) {
        return o instanceof Boolean ? (Boolean) o : dflt;
    }

    static List<String> strings(Object o) {
        List<String> out = new ArrayList<>();
        for (Object x : arr(o)) {
            if (x instanceof String) {
                out.add((String) x);
            }
        }
        return out;
    }

    // ------------------------------------------------------------------ cards

    /** Capture value: rank for 1-7, sota 8, caballo 9, rey 10. -1 for text that is no card. */
    static int value(String card) {
        int r = rank(card);
        if (r >= 1 && r <= 7) {
            return r;
        }
        if (r >= 10 && r <= 12) {
            return r - 2;
        }
        return -1;
    }

    static int rank(String card) {
        if (card == null || card.length() < 2) {
            return -1;
        }
        try {
            return Integer.parseInt(card.substring(0, card.length() - 1));
        } catch (NumberFormatException e) {
            return -1;
        }
    }

    static char suit(String card) {
        return card.charAt(card.length() - 1);
    }

    static int sum(List<String> cards) {
        int t = 0;
        for (String c : cards) {
            t += value(c);
        }
        return t;
    }

    /** A legal move split into its parts: kind is "play", "renuncio", "mesa" or "pass". */
    static final class Move {
        final String text;
        final String kind;
        final String card; // the played (or claimed) card; null for mesa and pass
        final List<String> take;

        Move(String text) {
            this.text = text;
            String t = text.trim();
            String body;
            if (t.equals("pass")) {
                kind = "pass";
                body = "";
            } else if (t.startsWith("renuncio ")) {
                kind = "renuncio";
                body = t.substring("renuncio ".length()).trim();
            } else if (t.startsWith("mesa ")) {
                kind = "mesa";
                body = t.substring("mesa ".length()).trim();
            } else {
                kind = "play";
                body = t;
            }
            List<String> parts = new ArrayList<>();
            for (String p : body.split("\\+")) {
                if (!p.isEmpty()) {
                    parts.add(p.trim());
                }
            }
            if (kind.equals("play") || kind.equals("renuncio")) {
                card = parts.isEmpty() ? null : parts.get(0);
                take = parts.isEmpty() ? parts : parts.subList(1, parts.size());
            } else {
                card = null;
                take = parts;
            }
        }
    }

    // ------------------------------------------------------------------ state

    private int seat = 0;
    private Map<String, Object> rules = new LinkedHashMap<>();
    /** Every card we have seen leave the stock this hand: table, our cards, plays, en mano. */
    private final Set<String> seen = new HashSet<>();

    private final PrintStream out;
    private final PrintStream log;

    EscobaBot(PrintStream out, PrintStream log) {
        this.out = out;
        this.log = log;
    }

    void startMatch(Map<String, Object> msg) {
        seat = (int) num(msg.get("seat"), 0);
        rules = obj(msg.get("rules"));
        seen.clear();
        log.println("match " + num(msg.get("match"), 0) + ": seat " + seat + " of "
                + num(msg.get("players"), 0) + ", side " + num(msg.get("side"), 0)
                + ", teams " + msg.get("teams"));
        send("{\"type\":\"ready\",\"name\":" + Json.quote(NAME) + ",\"protocol\":1}");
    }

    void onEvent(Map<String, Object> ev) {
        String type = str(ev.get("type"), "");
        switch (type) {
            case "deal":
                if (num(ev.get("round"), -1) == 0) {
                    seen.clear(); // a new hand: a fresh shuffled deck
                }
                seen.addAll(strings(ev.get("table")));
                break;
            case "cards":
            case "escoba_en_mano":
            case "initial_capture":
                seen.addAll(strings(ev.get("cards")));
                break;
            case "play":
            case "renuncio":
                String card = str(ev.get("card"), null);
                if (card != null) {
                    seen.add(card);
                }
                seen.addAll(strings(ev.get("take")));
                break;
            case "match_end":
                log.println("match end: winner " + ev.get("winner") + ", scores "
                        + ev.get("scores") + ", " + ev.get("reason"));
                break;
            default:
                break; // escoba, sweep, hand_score and kinds added later carry nothing we need
        }
    }

    void onRequest(Map<String, Object> msg) {
        Object id = msg.get("id");
        List<String> legal = strings(msg.get("legal"));
        if (legal.isEmpty()) {
            log.println("request " + id + " lists no legal move; not answering");
            return;
        }
        String choice;
        try {
            choice = choose(obj(msg.get("view")), legal);
        } catch (RuntimeException e) {
            // A bug in the strategy must not cost the match: any legal move beats a timeout.
            log.println("strategy failed (" + e + "); playing the first legal move");
            choice = legal.get(0);
        }
        String idText = id instanceof Long ? id.toString() : String.valueOf(num(id, 0));
        send("{\"type\":\"move\",\"id\":" + idText + ",\"move\":" + Json.quote(choice) + "}");
    }

    // ------------------------------------------------------------------ strategy

    String choose(Map<String, Object> view, List<String> legal) {
        List<String> hand = strings(view.get("hand"));
        List<String> table = strings(view.get("table"));
        seen.addAll(hand);
        seen.addAll(table);
        long stock = num(view.get("stock"), 0);
        // Option last_round_escoba (RULES.md rule 5): true, false or "last_card". In the last
        // round (no stock) false withholds every escoba, last_card that of one's final card.
        Object late = rules.get("last_round_escoba");
        boolean lastRound = stock == 0;
        boolean claimSweepScores = !lastRound || !Boolean.FALSE.equals(late);
        boolean playSweepScores = claimSweepScores && !(lastRound && "last_card".equals(late) && hand.size() == 1);

        String best = legal.get(0);
        double bestScore = Double.NEGATIVE_INFINITY;
        for (String text : legal) {
            Move m = new Move(text);
            double score;
            switch (m.kind) {
                case "pass":
                    score = 0;
                    break;
                case "mesa":
                    List<String> left = new ArrayList<>(table);
                    left.removeAll(m.take);
                    score = 1 + captureGain(m.take, left.isEmpty(), true) - exposure(left, null, view);
                    break;
                case "renuncio":
                    // The claimed card lies on the table now; the claim takes it plus `take`.
                    List<String> claimed = new ArrayList<>(m.take);
                    if (m.card != null) {
                        claimed.add(m.card);
                    }
                    score = 1 + captureGain(claimed, leavesEmpty(table, claimed), claimSweepScores);
                    break;
                default:
                    score = scorePlay(m, hand, table, view, playSweepScores);
            }
            if (score > bestScore) {
                bestScore = score;
                best = text;
            }
        }
        return best;
    }

    static boolean leavesEmpty(List<String> table, List<String> taken) {
        Set<String> rest = new HashSet<>(table);
        rest.removeAll(taken);
        return rest.isEmpty();
    }

    // Weights on a scale where one game point is 100: a velo is a point on its own, an
    // escoba too; a seven, an oro and a plain card are each a share of the point their
    // category decides (sevens 4 cards, oros 10, cards 40).
    static final double ESCOBA = 100;
    static final double CARD = 8;
    static final double ORO = 15;
    static final double SEVEN = 30;
    static final double VELO = 100;

    /** What a card is worth in our pile. */
    static double worth(String c) {
        double g = CARD;
        if (suit(c) == 'o') {
            g += ORO;
        }
        if (rank(c) == 7) {
            g += SEVEN;
            if (suit(c) == 'o') {
                g += VELO;
            }
        }
        return g;
    }

    /** The worth of putting these cards in our pile, plus an escoba if it empties the table. */
    static double captureGain(List<String> cards, boolean escoba, boolean escobaCounts) {
        double g = 0;
        for (String c : cards) {
            g += worth(c);
        }
        if (escoba && escobaCounts) {
            g += ESCOBA;
        }
        return g;
    }

    double scorePlay(Move m, List<String> hand, List<String> table, Map<String, Object> view,
                     boolean sweepScores) {
        if (m.card == null) {
            return -1e9;
        }
        List<String> after = new ArrayList<>(table);
        after.removeAll(m.take);
        double s;
        if (m.take.isEmpty()) {
            after.add(m.card);
            s = 0;
        } else {
            List<String> pile = new ArrayList<>(m.take);
            pile.add(m.card);
            s = captureGain(pile, after.isEmpty(), sweepScores);
        }
        return s - exposure(after, m.card, view);
    }

    /**
     * What we expect to lose from the table we leave: the next player sweeps it when they
     * hold a card worth 15 minus its total (the chance of that is drawn from the cards not
     * seen this hand), and whatever valuable card lies there may be taken anyway.
     */
    double exposure(List<String> after, String played, Map<String, Object> view) {
        if (after.isEmpty()) {
            return 0;
        }
        double onTable = 0;
        for (String c : after) {
            onTable += worth(c);
        }
        double loss = 0.3 * onTable;
        int need = 15 - sum(after);
        if (need < 1 || need > 10) {
            return loss;
        }
        List<Object> sizes = arr(view.get("hand_sizes"));
        int players = sizes.size();
        if (players == 0) {
            return loss;
        }
        int next = (seat + 1) % players;
        long h = num(sizes.get(next), 0);
        long myLeft = num(sizes.get(seat % players), 1) - 1;
        if (h == 0 && myLeft == 0 && num(view.get("stock"), 0) > 0) {
            h = 3; // everyone is out: a new round is dealt before the next player plays
        }
        int unseen = 0;
        int k = 0;
        for (String su : SUITS) {
            for (int r : RANKS) {
                String c = r + su;
                if (seen.contains(c) || c.equals(played)) {
                    continue;
                }
                unseen++;
                if (value(c) == need) {
                    k++;
                }
            }
        }
        if (k == 0 || h == 0 || unseen == 0) {
            return loss;
        }
        double pNone = 1;
        for (int j = 0; j < h && unseen - j > 0; j++) {
            pNone *= Math.max(0.0, (double) (unseen - k - j) / (unseen - j));
        }
        double pSweep = 1 - pNone;
        return loss + pSweep * (ESCOBA + 0.7 * onTable);
    }

    // ------------------------------------------------------------------ loop

    void send(String line) {
        out.print(line + "\n");
        out.flush();
    }

    /** Returns false when the conversation is over. */
    boolean handle(String line) {
        if (line.isBlank()) {
            return true;
        }
        Map<String, Object> msg;
        try {
            Object parsed = Json.parse(line);
            if (!(parsed instanceof Map)) {
                log.println("ignoring a line that is not an object: " + line);
                return true;
            }
            msg = obj(parsed);
        } catch (JsonError e) {
            log.println("ignoring unreadable line (" + e.getMessage() + "): " + line);
            return true;
        }
        String type = str(msg.get("type"), "");
        switch (type) {
            case "hello":
            case "new_match":
                startMatch(msg);
                return true;
            case "event":
                onEvent(obj(msg.get("event")));
                return true;
            case "request":
                onRequest(msg);
                return true;
            case "timeout":
                log.println("request " + msg.get("id") + " timed out; the arena played "
                        + msg.get("move"));
                return true;
            case "match_over":
                log.println("match over: winner " + msg.get("winner") + ", scores "
                        + msg.get("scores") + ", reason " + msg.get("reason")
                        + ", termination " + msg.get("termination"));
                return true;
            case "goodbye":
                return false;
            default:
                return true; // unknown kinds may come with later versions of protocol 1
        }
    }

    public static void main(String[] args) throws IOException {
        PrintStream out = new PrintStream(System.out, false, StandardCharsets.UTF_8);
        PrintStream log = new PrintStream(System.err, true, StandardCharsets.UTF_8);
        EscobaBot bot = new EscobaBot(out, log);
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        String line;
        while ((line = in.readLine()) != null) {
            if (!bot.handle(line)) {
                break;
            }
        }
        log.println("bye");
        out.flush();
    }
}
