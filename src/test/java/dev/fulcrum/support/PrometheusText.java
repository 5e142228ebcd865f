package dev.fulcrum.support;

import java.util.ArrayList;
import java.util.HashSet;
import java.util.LinkedHashMap;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

import org.hamcrest.Matchers;

import io.restassured.RestAssured;

/**
 * A strict reader of the Prometheus text exposition format (version 0.0.4): every line is a {@code # HELP}, a
 * {@code # TYPE}, another comment, or a sample {@code name{label="value",...} value [timestamp]}; names and label names
 * follow the format's grammar, label values only use the escapes it defines, a family is typed at most once and before
 * its first sample, a sample belongs to a typed family by its type's suffixes (otherwise it is untyped), the lines of a
 * family form one group, and no sample appears twice. Anything else fails with the line.
 */
public final class PrometheusText {

    private static final Pattern NAME = Pattern.compile("[a-zA-Z_:][a-zA-Z0-9_:]*");
    private static final Pattern LABEL_NAME = Pattern.compile("[a-zA-Z_][a-zA-Z0-9_]*");
    private static final Pattern HELP = Pattern.compile("# HELP (" + NAME.pattern() + ") (.*)");
    private static final Pattern TYPE = Pattern
            .compile("# TYPE (" + NAME.pattern() + ") (counter|gauge|histogram|summary|untyped)");
    private static final Pattern VALUE = Pattern
            .compile("[+-]?(Inf|NaN|[0-9]+(\\.[0-9]*)?([eE][+-]?[0-9]+)?|\\.[0-9]+([eE][+-]?[0-9]+)?)");

    /** A sample: its name, labels in order, and value. */
    public record Sample(String name, Map<String, String> labels, double value) {
    }

    private final Map<String, String> types = new LinkedHashMap<>();
    private final List<Sample> samples = new ArrayList<>();

    private PrometheusText() {
    }

    /** Reads a page; fails (AssertionError) on the first line that is not in the format. */
    /** The running server's metrics page, read and parsed. */
    public static PrometheusText fetch() {
        String page = RestAssured.given().accept("text/plain; version=0.0.4").when().get("/q/metrics").then()
                .statusCode(200).contentType(Matchers.startsWith("text/plain")).extract().asString();
        return parse(page);
    }

    public static PrometheusText parse(String page) {
        PrometheusText text = new PrometheusText();
        String current = null; // the family of the group of lines under way
        Set<String> done = new HashSet<>(); // families whose group of lines has ended
        Set<String> seen = new HashSet<>();
        Set<String> names = new HashSet<>(); // of the samples so far
        String[] lines = page.split("\n", -1);
        if (!page.isEmpty() && !page.endsWith("\n")) {
            throw new AssertionError("The page does not end with a line feed");
        }
        for (int i = 0; i < lines.length; i++) {
            String line = lines[i];
            if (line.isEmpty()) {
                if (i == lines.length - 1) {
                    continue;
                }
                throw new AssertionError("Empty line " + (i + 1));
            }
            String family;
            if (line.startsWith("#")) {
                Matcher type = TYPE.matcher(line);
                Matcher help = HELP.matcher(line);
                if (type.matches()) {
                    family = type.group(1);
                    if (text.types.put(family, type.group(2)) != null) {
                        throw new AssertionError("Family typed twice: " + line);
                    }
                    if (names.stream().anyMatch(name -> belongs(name, family, type.group(2)))) {
                        throw new AssertionError("TYPE after the family's first sample: " + line);
                    }
                } else if (help.matches()) {
                    family = help.group(1);
                } else if (line.startsWith("# HELP") || line.startsWith("# TYPE")) {
                    throw new AssertionError("Bad HELP or TYPE line " + (i + 1) + ": " + line);
                } else {
                    continue; // another comment
                }
            } else {
                Sample sample = sample(line, i + 1);
                family = text.familyOf(sample.name());
                if (!seen.add(sample.name() + sample.labels())) {
                    throw new AssertionError("Sample repeated at line " + (i + 1) + ": " + line);
                }
                text.samples.add(sample);
                names.add(sample.name());
            }
            if (!family.equals(current)) {
                if (done.contains(family)) {
                    throw new AssertionError("The lines of " + family + " are not one group, at line " + (i + 1));
                }
                if (current != null) {
                    done.add(current);
                }
                current = family;
            }
        }
        return text;
    }

    /** The typed family a sample name belongs to (by the suffixes of its type), else the name itself (untyped). */
    private String familyOf(String name) {
        if (belongs(name, name, types.get(name))) {
            return name;
        }
        for (String suffix : SUFFIXES) {
            if (name.endsWith(suffix)) {
                String family = name.substring(0, name.length() - suffix.length());
                if (belongs(name, family, types.get(family))) {
                    return family;
                }
            }
        }
        return name;
    }

    private static final List<String> SUFFIXES = List.of("_bucket", "_sum", "_count", "_created", "_total");

    /** Whether a sample of that name belongs to {@code family} of that type (null: untyped, no family). */
    private static boolean belongs(String name, String family, String type) {
        if (type == null) {
            return false;
        }
        if (name.equals(family)) {
            return !type.equals("histogram");
        }
        List<String> suffixes = switch (type) {
            case "histogram" -> List.of("_bucket", "_sum", "_count", "_created");
            case "summary" -> List.of("_sum", "_count", "_created");
            case "counter" -> List.of("_total", "_created");
            default -> List.of();
        };
        return suffixes.stream().anyMatch(suffix -> name.equals(family + suffix));
    }

    private static Sample sample(String line, int number) {
        Matcher name = NAME.matcher(line);
        if (!name.lookingAt()) {
            throw new AssertionError("Bad metric name at line " + number + ": " + line);
        }
        int at = name.end();
        Map<String, String> labels = new LinkedHashMap<>();
        if (at < line.length() && line.charAt(at) == '{') {
            at++;
            while (line.charAt(at) != '}') {
                Matcher label = LABEL_NAME.matcher(line).region(at, line.length());
                if (!label.lookingAt() || line.charAt(label.end()) != '=' || line.charAt(label.end() + 1) != '"') {
                    throw new AssertionError("Bad label at line " + number + ": " + line);
                }
                at = label.end() + 2;
                StringBuilder value = new StringBuilder();
                while (line.charAt(at) != '"') {
                    char c = line.charAt(at++);
                    if (c == '\\') {
                        char escaped = line.charAt(at++);
                        switch (escaped) {
                            case '\\' -> value.append('\\');
                            case '"' -> value.append('"');
                            case 'n' -> value.append('\n');
                            default -> throw new AssertionError("Bad escape at line " + number + ": " + line);
                        }
                    } else {
                        value.append(c);
                    }
                }
                at++;
                if (labels.put(label.group(), value.toString()) != null) {
                    throw new AssertionError("Label repeated at line " + number + ": " + line);
                }
                if (line.charAt(at) == ',') {
                    at++;
                } else if (line.charAt(at) != '}') {
                    throw new AssertionError("Bad label list at line " + number + ": " + line);
                }
            }
            at++;
        }
        String[] rest = line.substring(at).split(" ", -1);
        if (rest.length < 2 || rest.length > 3 || !rest[0].isEmpty() || !VALUE.matcher(rest[1]).matches()
                || (rest.length == 3 && !rest[2].matches("-?[0-9]+"))) {
            throw new AssertionError("Bad value at line " + number + ": " + line);
        }
        String v = rest[1];
        double value = v.endsWith("Inf") ? (v.startsWith("-") ? Double.NEGATIVE_INFINITY : Double.POSITIVE_INFINITY)
                : v.equals("NaN") ? Double.NaN : Double.parseDouble(v);
        return new Sample(name.group(), labels, value);
    }

    /** The type of a family, or null when the page has none of that name. */
    public String type(String family) {
        return types.get(family);
    }

    public List<Sample> samples() {
        return samples;
    }

    /** The samples of that name whose labels include {@code labels}. */
    public List<Sample> samples(String name, Map<String, String> labels) {
        return samples.stream().filter(s -> s.name().equals(name))
                .filter(s -> s.labels().entrySet().containsAll(labels.entrySet())).toList();
    }

    /** The sum of the values of {@link #samples(String, Map)}; 0 when there are none. */
    public double sum(String name, Map<String, String> labels) {
        return samples(name, labels).stream().mapToDouble(Sample::value).sum();
    }
}
