package dev.fulcrum.platform;

import static org.junit.jupiter.api.Assertions.assertEquals;
import static org.junit.jupiter.api.Assertions.assertTrue;

import java.io.IOException;
import java.nio.file.Files;
import java.nio.file.Path;
import java.util.ArrayList;
import java.util.List;
import java.util.Map;
import java.util.Set;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;
import java.util.stream.Stream;

import org.junit.jupiter.api.Test;

/**
 * The rooms of {@code platform} as {@code docs/architecture.md} draws them, read from the import lines: the top holds
 * the typed config, caches and the process's own files and imports no room; {@code errors} (what a failure is, with no
 * HTTP in it) sits on the top; {@code json} (input rules) on {@code errors}; {@code http} (requests, limits, and the
 * one exception mapper with its shapes) on both; {@code database} on the top only. And {@code platform} imports no
 * feature. A comment that names a class of a room above spells the class out instead of importing it.
 */
class PlatformLayersTest {

    private static final Path SOURCES = Path.of("src/main/java/dev/fulcrum");
    private static final Pattern IMPORT = Pattern.compile("^import (?:static )?dev\\.fulcrum\\.([\\w.]+?)\\.[A-Z]\\w*",
            Pattern.MULTILINE);

    /** Each room, and the rooms it may import. */
    private static final Map<String, Set<String>> ALLOWED = Map.of( //
            "platform", Set.of(), //
            "platform.errors", Set.of("platform"), //
            "platform.json", Set.of("platform", "platform.errors"), //
            "platform.http", Set.of("platform", "platform.errors", "platform.json"), //
            "platform.database", Set.of("platform"));

    /** The Fulcrum packages the classes directly in {@code room} import, with the class that imports each. */
    private static List<String> imports(String room) throws IOException {
        Path folder = SOURCES.resolve(room.replace('.', '/'));
        assertTrue(Files.isDirectory(folder), folder + " is a folder");
        List<String> found = new ArrayList<>();
        try (Stream<Path> files = Files.list(folder)) {
            for (Path source : files.filter(f -> f.toString().endsWith(".java")).sorted().toList()) {
                Matcher imported = IMPORT.matcher(Files.readString(source));
                while (imported.find()) {
                    if (!imported.group(1).equals(room)) {
                        found.add(source.getFileName() + " -> " + imported.group(1));
                    }
                }
            }
        }
        return found;
    }

    @Test
    void eachRoomImportsOnlyTheRoomsBelowIt() throws IOException {
        List<String> wrong = new ArrayList<>();
        for (Map.Entry<String, Set<String>> room : ALLOWED.entrySet()) {
            for (String line : imports(room.getKey())) {
                if (!room.getValue().contains(line.substring(line.indexOf(" -> ") + 4))) {
                    wrong.add(room.getKey() + "/" + line);
                }
            }
        }
        assertEquals(List.of(), wrong);
    }

    @Test
    void everyRoomIsNamedHere() throws IOException {
        Set<String> rooms = new TreeSet<>();
        try (Stream<Path> folders = Files.walk(SOURCES.resolve("platform"))) {
            folders.filter(Files::isDirectory)
                    .forEach(f -> rooms.add(SOURCES.relativize(f).toString().replace('/', '.')));
        }
        assertEquals(new TreeSet<>(ALLOWED.keySet()), rooms);
    }
}
