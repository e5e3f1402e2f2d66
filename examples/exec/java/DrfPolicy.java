// Dominant Resource Fairness on one resource pool, as a policy program in Java (docs/exec-protocol.md).
//
// DRF (Ghodsi et al.; seed 000 Sec. II-A) equalises the users' dominant shares: user j's share of resource r
// per task is d[j][r] / c[r], its dominant share per task s_j = max_r d[j][r] / c[r].  Progressive filling
// raises a common level t, user j running x_j = t / s_j tasks, until a resource is full:
//     t = min over r of c[r] / (sum over j of d[j][r] / s_j).
// With every demand positive every user needs every resource, so the first full resource stops them all:
// that t is the allocation.  DRF is strategy-proof, envy-free, gives every user its share and is
// Pareto-optimal there; the handshake claims it, and `python -m verifier run` finds no violation.
//
// Numbers: the instance's numbers come as exact strings ("9", "3/4"); this program computes with exact
// rationals (BigInteger) and answers exact strings "p/q", which mechverify reads exactly.
//
// A PLANTED BUG, for the demonstration: `--cpu-only` takes the share of the FIRST resource for the dominant
// share (s_j = d[j][0] / c[0]).  A user that needs little of it and much of another resource is then raised
// as fast as the others in its first-resource share but runs almost nothing: it gets less than its share
// (sharing incentive fails), which `python -m verifier run` finds.
//
//   javac -d /tmp/drf examples/exec/java/DrfPolicy.java
//   python -m verifier run "exec:java -cp /tmp/drf DrfPolicy" --budget 30
//   python -m verifier run "exec:java -cp /tmp/drf DrfPolicy --cpu-only" si --budget 30
import java.io.BufferedReader;
import java.io.InputStreamReader;
import java.io.PrintStream;
import java.math.BigInteger;
import java.nio.charset.StandardCharsets;
import java.util.ArrayList;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;

public final class DrfPolicy {

    /** An exact rational p/q, q > 0, in lowest terms. */
    static final class Q implements Comparable<Q> {
        final BigInteger p, q;

        Q(BigInteger p, BigInteger q) {
            if (q.signum() < 0) { p = p.negate(); q = q.negate(); }
            BigInteger g = p.gcd(q);
            if (g.signum() == 0) g = BigInteger.ONE;
            this.p = p.divide(g);
            this.q = q.divide(g);
        }

        /** "p/q", an integer or a decimal ("0.25", "1e-3"), exactly. */
        static Q parse(String s) {
            int slash = s.indexOf('/');
            if (slash >= 0) return new Q(new BigInteger(s.substring(0, slash)), new BigInteger(s.substring(slash + 1)));
            java.math.BigDecimal d = new java.math.BigDecimal(s);
            return d.scale() > 0 ? new Q(d.unscaledValue(), BigInteger.TEN.pow(d.scale()))
                                 : new Q(d.toBigIntegerExact(), BigInteger.ONE);
        }

        Q plus(Q o) { return new Q(p.multiply(o.q).add(o.p.multiply(q)), q.multiply(o.q)); }
        Q times(Q o) { return new Q(p.multiply(o.p), q.multiply(o.q)); }
        Q over(Q o) { return new Q(p.multiply(o.q), q.multiply(o.p)); }
        boolean isZero() { return p.signum() == 0; }
        public int compareTo(Q o) { return p.multiply(o.q).compareTo(o.p.multiply(q)); }
        public String toString() { return q.equals(BigInteger.ONE) ? p.toString() : p + "/" + q; }
    }

    static final Q ZERO = new Q(BigInteger.ZERO, BigInteger.ONE);

    /** The allocation tasks[user][0] of an instance with one server and every demand and capacity positive. */
    @SuppressWarnings("unchecked")
    static List<List<String>> allocate(Map<String, Object> instance, boolean cpuOnly) {
        List<Object> servers = (List<Object>) instance.get("servers");
        if (servers.size() != 1) throw new IllegalArgumentException("defined for one server, got " + servers.size());
        List<Object> capText = (List<Object>) ((Map<String, Object>) servers.get(0)).get("capacity");
        int R = capText.size();
        Q[] cap = new Q[R];
        for (int r = 0; r < R; r++) cap[r] = Q.parse((String) capText.get(r));
        List<Object> users = (List<Object>) instance.get("users");
        int J = users.size();
        Q[][] d = new Q[J][R];
        Q[] share = new Q[J];  // the dominant share of one task
        for (int j = 0; j < J; j++) {
            List<Object> dem = (List<Object>) ((Map<String, Object>) users.get(j)).get("demand");
            share[j] = ZERO;
            for (int r = 0; r < R; r++) {
                d[j][r] = Q.parse((String) dem.get(r));
                Q s = d[j][r].over(cap[r]);
                if (s.compareTo(share[j]) > 0) share[j] = s;
            }
            if (cpuOnly) share[j] = d[j][0].over(cap[0]);  // THE PLANTED BUG: the first resource's share
        }
        Q level = null;  // t = min over r of c[r] / sum_j d[j][r] / s_j
        for (int r = 0; r < R; r++) {
            Q rate = ZERO;
            for (int j = 0; j < J; j++) rate = rate.plus(d[j][r].over(share[j]));
            if (rate.isZero()) continue;
            Q t = cap[r].over(rate);
            if (level == null || t.compareTo(level) < 0) level = t;
        }
        List<List<String>> tasks = new ArrayList<>();
        for (int j = 0; j < J; j++) {
            List<String> row = new ArrayList<>();
            row.add(level == null ? "0" : level.over(share[j]).toString());
            tasks.add(row);
        }
        return tasks;
    }

    public static void main(String[] args) throws Exception {
        boolean cpuOnly = args.length > 0 && args[0].equals("--cpu-only");
        PrintStream out = new PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), false, "UTF-8");
        Map<String, Object> hello = new LinkedHashMap<>();
        hello.put("protocol", "mechverify-exec");
        hello.put("version", 1);
        hello.put("name", cpuOnly ? "drf-java-cpu-only" : "drf-java");
        hello.put("title", cpuOnly ? "DRF with a planted bug: the first resource's share for the dominant share (Java)"
                                   : "Dominant Resource Fairness on one resource pool (Java, exact rationals)");
        hello.put("source", "examples/exec/java/DrfPolicy.java" + (cpuOnly ? " --cpu-only" : ""));
        hello.put("provides", List.of("allocate"));
        Map<String, Object> setting = new LinkedHashMap<>();
        setting.put("single_server", true);
        setting.put("positive_data", true);
        hello.put("setting", setting);
        Map<String, Object> claims = new LinkedHashMap<>();
        for (String p : new String[] {"sp", "ef", "si", "po"}) claims.put(p, "holds");
        hello.put("claims", claims);
        out.println(Json.write(hello));
        out.flush();
        BufferedReader in = new BufferedReader(new InputStreamReader(System.in, StandardCharsets.UTF_8));
        for (String line = in.readLine(); line != null; line = in.readLine()) {  // until mechverify closes our input
            if (line.isBlank()) continue;
            @SuppressWarnings("unchecked")
            Map<String, Object> request = (Map<String, Object>) Json.parse(line);
            Map<String, Object> answer = new LinkedHashMap<>();
            answer.put("id", request.get("id"));
            try {
                if (!"allocate".equals(request.get("op"))) throw new IllegalArgumentException("cannot answer " + request.get("op"));
                @SuppressWarnings("unchecked")
                Map<String, Object> instance = (Map<String, Object>) request.get("instance");
                answer.put("tasks", allocate(instance, cpuOnly));
            } catch (RuntimeException e) {
                answer.put("error", e.toString());
            }
            out.println(Json.write(answer));
            out.flush();
        }
    }

    /** Just enough JSON: objects, arrays, strings, numbers (as java.math.BigDecimal), true, false, null. */
    static final class Json {
        private final String s;
        private int i;

        private Json(String s) { this.s = s; }

        static Object parse(String text) {
            Json p = new Json(text);
            Object v = p.value();
            p.space();
            if (p.i != text.length()) throw new IllegalArgumentException("trailing text at " + p.i);
            return v;
        }

        private void space() { while (i < s.length() && Character.isWhitespace(s.charAt(i))) i++; }

        private Object value() {
            space();
            char c = s.charAt(i);
            if (c == '{') {
                Map<String, Object> m = new LinkedHashMap<>();
                i++; space();
                if (s.charAt(i) == '}') { i++; return m; }
                while (true) {
                    space();
                    String k = string();
                    space(); expect(':');
                    m.put(k, value());
                    space();
                    if (s.charAt(i) == ',') { i++; continue; }
                    expect('}');
                    return m;
                }
            }
            if (c == '[') {
                List<Object> a = new ArrayList<>();
                i++; space();
                if (s.charAt(i) == ']') { i++; return a; }
                while (true) {
                    a.add(value());
                    space();
                    if (s.charAt(i) == ',') { i++; continue; }
                    expect(']');
                    return a;
                }
            }
            if (c == '"') return string();
            if (s.startsWith("true", i)) { i += 4; return Boolean.TRUE; }
            if (s.startsWith("false", i)) { i += 5; return Boolean.FALSE; }
            if (s.startsWith("null", i)) { i += 4; return null; }
            int start = i;
            while (i < s.length() && "+-0123456789.eE".indexOf(s.charAt(i)) >= 0) i++;
            return new java.math.BigDecimal(s.substring(start, i));
        }

        private void expect(char c) {
            if (s.charAt(i) != c) throw new IllegalArgumentException("expected '" + c + "' at " + i);
            i++;
        }

        private String string() {
            expect('"');
            StringBuilder b = new StringBuilder();
            while (true) {
                char c = s.charAt(i++);
                if (c == '"') return b.toString();
                if (c != '\\') { b.append(c); continue; }
                char e = s.charAt(i++);
                switch (e) {
                    case 'n': b.append('\n'); break;
                    case 't': b.append('\t'); break;
                    case 'r': b.append('\r'); break;
                    case 'b': b.append('\b'); break;
                    case 'f': b.append('\f'); break;
                    case 'u': b.append((char) Integer.parseInt(s.substring(i, i + 4), 16)); i += 4; break;
                    default: b.append(e);
                }
            }
        }

        static String write(Object v) {
            StringBuilder b = new StringBuilder();
            write(v, b);
            return b.toString();
        }

        private static void write(Object v, StringBuilder b) {
            if (v == null) { b.append("null"); return; }
            if (v instanceof Map) {
                b.append('{');
                boolean first = true;
                for (Map.Entry<?, ?> e : ((Map<?, ?>) v).entrySet()) {
                    if (!first) b.append(',');
                    first = false;
                    write(String.valueOf(e.getKey()), b);
                    b.append(':');
                    write(e.getValue(), b);
                }
                b.append('}');
            } else if (v instanceof List) {
                b.append('[');
                boolean first = true;
                for (Object o : (List<?>) v) {
                    if (!first) b.append(',');
                    first = false;
                    write(o, b);
                }
                b.append(']');
            } else if (v instanceof String) {
                b.append('"');
                for (char c : ((String) v).toCharArray()) {
                    if (c == '"' || c == '\\') b.append('\\').append(c);
                    else if (c < 0x20) b.append(String.format("\\u%04x", (int) c));
                    else b.append(c);
                }
                b.append('"');
            } else if (v instanceof java.math.BigDecimal) {
                b.append(((java.math.BigDecimal) v).toPlainString());
            } else {
                b.append(v);  // Integer, Boolean
            }
        }
    }
}
