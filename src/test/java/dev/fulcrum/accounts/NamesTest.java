package dev.fulcrum.accounts;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertFalse;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.List;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

/** The one rule of names: its bounds, its regular expression, and no copy of it elsewhere in the sources. */
class NamesTest {

    @Test
    void aNameIsLettersDigitsAndUnderscoreDotDashFromALetterOrDigitUpToItsKindsLength() {
        assertTrue(Names.isEntity("a"));
        assertTrue(Names.isEntity("team_1.a-b"));
        assertTrue(Names.isEntity("x".repeat(64)));
        assertFalse(Names.isEntity("x".repeat(65)));
        assertTrue(Names.isProject("x".repeat(128)));
        assertFalse(Names.isProject("x".repeat(129)));
        for (String bad : List.of("", "-a", ".a", "_a", "a/b", "a b", "é", "a\u0000")) {
            assertFalse(Names.isName(bad, 128), bad);
        }
        assertFalse(Names.isName(null, 128));
        assertEquals("Must be 1 to 64 letters, digits, '_', '.' or '-', starting with a letter or digit",
                Names.rule(64));
    }

    @Test
    void theRegularExpressionSaysWhatIsNameSays() {
        Pattern sixtyFour = Pattern.compile(Names.regex(64));
        for (String name : List.of("a", "A9", "a_b.c-d", "x".repeat(64), "x".repeat(65), "-a", "", "a/b")) {
            assertEquals(Names.isName(name, 64), sixtyFour.matcher(name).matches(), name);
        }
    }

    @Test
    void noOtherSourceWritesTheRule() throws IOException {
        Path sources = Path.of("src/main/java/dev/fulcrum");
        Path owner = sources.resolve("accounts/Names.java");
        Path hub = sources.resolve("inference/hub/HubName.java"); // the Hub's own rule for its repositories
        try (Stream<Path> files = Files.walk(sources)) {
            List<Path> copies = files.filter(f -> f.toString().endsWith(".java")).filter(f -> !f.equals(owner))
                    .filter(f -> !f.equals(hub)).filter(f -> {
                        try {
                            return Files.readString(f).contains("[A-Za-z0-9][A-Za-z0-9_.-]");
                        } catch (IOException e) {
                            throw new IllegalStateException(e);
                        }
                    }).toList();
            assertEquals(List.of(), copies);
        }
    }
}
