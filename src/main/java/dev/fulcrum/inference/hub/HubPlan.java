package dev.fulcrum.inference.hub;

import java.util.List;

/**
 * What a pull downloads: the files chosen of a repository (one GGUF, or every part of a split one, first part first) at
 * the commit the Hub named for the revision asked for.
 */
public record HubPlan(HubName name, String revision, String commit, List<HubFile> files) {

    public HubPlan {
        files = List.copyOf(files);
    }

    public long totalBytes() {
        return files.stream().mapToLong(HubFile::size).sum();
    }
}
