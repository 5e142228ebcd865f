package dev.fulcrum.inference.hub;

import java.util.ArrayList;
import java.util.Comparator;
import java.util.List;
import java.util.Locale;
import java.util.Optional;
import java.util.TreeSet;
import java.util.regex.Matcher;
import java.util.regex.Pattern;

/**
 * Which files of a repository a name pulls, as llama.cpp's {@code -hf} chooses: the GGUF whose name holds the tag (case
 * ignored; an exact quantisation token first), else {@code Q4_K_M}, then {@code Q8_0}, then the first GGUF by path.
 * Projectors ({@code mmproj}) and importance matrices ({@code imatrix}) are never chosen; a split GGUF
 * ({@code -00001-of-0000N.gguf}) is chosen by its first part and pulled whole.
 */
final class HubFiles {

    static final List<String> DEFAULT_TAGS = List.of("Q4_K_M", "Q8_0");
    private static final Pattern SPLIT = Pattern.compile("(?i)^(.*)-(\\d{5})-of-(\\d{5})\\.gguf$");
    private static final Pattern QUANT = Pattern
            .compile("(?i)(?<![A-Za-z0-9])(I?Q[0-9]+(?:_[0-9A-Z]+)*|BF16|F16|F32)(?![A-Za-z0-9])");

    private HubFiles() {
    }

    /** The files to pull, first part first; fails NOT_FOUND naming the tags the repository has. */
    static List<HubFile> choose(List<HubFile> listed, HubName name, String revision) {
        List<HubFile> candidates = listed.stream().filter(HubFiles::model).filter(HubFiles::firstOrWhole)
                .sorted(Comparator.comparing(HubFile::path)).toList();
        if (candidates.isEmpty()) {
            throw new HubException(HubException.Reason.NOT_FOUND,
                    "The repository " + name.repo() + " at " + revision + " holds no GGUF model file");
        }
        HubFile chosen;
        if (name.tag() != null) {
            chosen = match(candidates, name.tag()).orElseThrow(() -> new HubException(HubException.Reason.NOT_FOUND,
                    "No GGUF file of " + name.repo() + " at " + revision + " matches the tag " + name.tag()
                            + "; its tags: " + String.join(", ", tags(candidates))));
        } else {
            chosen = match(candidates, DEFAULT_TAGS.get(0)).or(() -> match(candidates, DEFAULT_TAGS.get(1)))
                    .orElse(candidates.get(0));
        }
        return parts(chosen, listed, name);
    }

    /** The quantisation tags of a repository's model files, for the error of a tag not found. */
    static List<String> tags(List<HubFile> candidates) {
        TreeSet<String> tags = new TreeSet<>();
        for (HubFile file : candidates) {
            Matcher m = QUANT.matcher(stem(file));
            while (m.find()) {
                tags.add(m.group(1).toUpperCase(Locale.ROOT));
            }
        }
        if (tags.isEmpty()) {
            candidates.forEach(file -> tags.add(fileName(file.path())));
        }
        return List.copyOf(tags);
    }

    /** A file whose quantisation token is the tag, else the first whose name holds it. */
    private static Optional<HubFile> match(List<HubFile> candidates, String tag) {
        String wanted = tag.toLowerCase(Locale.ROOT);
        for (HubFile file : candidates) {
            Matcher m = QUANT.matcher(stem(file));
            while (m.find()) {
                if (m.group(1).toLowerCase(Locale.ROOT).equals(wanted)) {
                    return Optional.of(file);
                }
            }
        }
        return candidates.stream().filter(file -> fileName(file.path()).toLowerCase(Locale.ROOT).contains(wanted))
                .findFirst();
    }

    private static boolean model(HubFile file) {
        String lower = fileName(file.path()).toLowerCase(Locale.ROOT);
        return lower.endsWith(".gguf") && !lower.contains("mmproj") && !lower.contains("imatrix");
    }

    private static boolean firstOrWhole(HubFile file) {
        Matcher m = SPLIT.matcher(file.path());
        return !m.matches() || Integer.parseInt(m.group(2)) == 1;
    }

    /** The file name without its directory, split suffix and extension. */
    private static String stem(HubFile file) {
        String name = fileName(file.path());
        Matcher m = SPLIT.matcher(name);
        if (m.matches()) {
            return m.group(1);
        }
        return name.substring(0, name.length() - ".gguf".length());
    }

    /** Every part of a split GGUF, in order; the file alone otherwise. */
    private static List<HubFile> parts(HubFile first, List<HubFile> listed, HubName name) {
        Matcher m = SPLIT.matcher(first.path());
        if (!m.matches()) {
            return List.of(first);
        }
        int count = Integer.parseInt(m.group(3));
        List<HubFile> parts = new ArrayList<>(count);
        for (int i = 1; i <= count; i++) {
            String path = "%s-%05d-of-%s.gguf".formatted(m.group(1), i, m.group(3));
            parts.add(listed.stream().filter(f -> f.path().equalsIgnoreCase(path)).findFirst()
                    .orElseThrow(() -> new HubException(HubException.Reason.NOT_FOUND, "The repository " + name.repo()
                            + " lacks " + path + ", part of the split GGUF " + first.path())));
        }
        return parts;
    }

    /** Whether a file is a part of a split GGUF, and which: the index and the count, or null. */
    static int[] split(String path) {
        Matcher m = SPLIT.matcher(path);
        return m.matches() ? new int[] { Integer.parseInt(m.group(2)), Integer.parseInt(m.group(3)) } : null;
    }

    static String fileName(String path) {
        return path.substring(path.lastIndexOf('/') + 1);
    }
}
