package dev.fulcrum.docs;

import static org.junit.jupiter.api.Assertions.assertEquals;

import java.io.IOException;
import java.io.UncheckedIOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.text.Normalizer;
import java.util.ArrayList;
import java.util.HashSet;
import java.util.List;
import java.util.Locale;
import java.util.Set;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Collectors;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

/**
 * The docs tell the truth about where things are: every relative link of every Markdown file in the repository (the
 * README, {@code docs/}, {@code worker/}, {@code bench/}, ...) names a file that exists, and a link's {@code #anchor} a
 * heading of its target; every repository path the README names in backticks exists.
 */
class DocLinksTest {

    private static final Path ROOT = Path.of("").toAbsolutePath();
    private static final Pattern LINK = Pattern.compile("\\[[^\\]]*\\]\\(([^)\\s]+)\\)");
    private static final Pattern CODE_PATH = Pattern
            .compile("`((?:src|docs|bench|worker|openapi|scripts|deploy|examples|\\.ci)/[A-Za-z0-9_./-]*)`");
    private static final Set<String> SKIPPED = Set.of("node_modules", "target", ".venv", ".git");

    @Test
    void everyRelativeLinkOfEveryDocumentReachesAFileAndItsHeading() {
        List<String> broken = new ArrayList<>();
        for (Path doc : documents()) {
            Matcher link = LINK.matcher(read(doc));
            while (link.find()) {
                String target = link.group(1);
                if (target.matches("^[a-z][a-z0-9+.-]*:.*")) {
                    continue; // http:, https:, mailto:
                }
                int hash = target.indexOf('#');
                String file = hash < 0 ? target : target.substring(0, hash);
                Path resolved = file.isEmpty() ? doc : doc.getParent().resolve(file).normalize();
                if (!Files.exists(resolved)) {
                    broken.add(ROOT.relativize(doc) + ": " + target + " (no such file)");
                } else if (hash >= 0 && resolved.toString().endsWith(".md")
                        && !anchors(resolved).contains(target.substring(hash + 1))) {
                    broken.add(ROOT.relativize(doc) + ": " + target + " (no such heading)");
                }
            }
        }
        assertEquals(List.of(), broken, "broken links");
    }

    @Test
    void everyPathTheReadmeNamesExists() {
        List<String> missing = new ArrayList<>();
        Matcher path = CODE_PATH.matcher(read(ROOT.resolve("README.md")));
        while (path.find()) {
            String named = path.group(1);
            if (!named.contains("*") && !Files.exists(ROOT.resolve(named))) {
                missing.add(named);
            }
        }
        assertEquals(List.of(), missing, "paths the README names that do not exist");
    }

    /** The Markdown files of the repository, outside build output, virtual environments and dependencies. */
    private static List<Path> documents() {
        try (Stream<Path> walk = Files.walk(ROOT)) {
            return walk.filter(p -> p.toString().endsWith(".md")).filter(p -> {
                for (Path part : ROOT.relativize(p)) {
                    if (SKIPPED.contains(part.toString())) {
                        return false;
                    }
                }
                return true;
            }).sorted().collect(Collectors.toList());
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }

    /** The anchors GitHub makes of a document's headings: lower case, punctuation dropped, spaces as dashes. */
    static Set<String> anchors(Path doc) {
        Set<String> anchors = new HashSet<>();
        boolean fenced = false;
        for (String line : read(doc).split("\n")) {
            if (line.startsWith("```")) {
                fenced = !fenced;
            }
            if (!fenced && line.startsWith("#")) {
                String text = line.replaceFirst("^#+\\s*", "").strip();
                String slug = Normalizer.normalize(text, Normalizer.Form.NFC).toLowerCase(Locale.ROOT)
                        .replaceAll("[^\\p{L}\\p{N} _-]", "").replace(' ', '-');
                String unique = slug;
                for (int i = 1; !anchors.add(unique); i++) {
                    unique = slug + "-" + i;
                }
            }
        }
        return anchors;
    }

    private static String read(Path file) {
        try {
            return Files.readString(file);
        } catch (IOException e) {
            throw new UncheckedIOException(e);
        }
    }
}
