package dev.fulcrum.artifacts;

import dev.fulcrum.artifacts.api.model.ArtifactFile;
import dev.fulcrum.artifacts.api.model.ArtifactVersion;
import dev.fulcrum.artifacts.api.model.Collection;
import dev.fulcrum.artifacts.api.model.RegistryLink;
import dev.fulcrum.artifacts.api.model.VersionPage;

/** Service views to API models. */
final class ArtifactMapper {

    private ArtifactMapper() {
    }

    static Collection toCollection(ArtifactViews.CollectionView c) {
        return new Collection().name(c.name()).type(c.type()).entity(c.entity()).project(c.project())
                .description(c.description()).versionCount(c.versionCount()).createdBy(c.createdBy())
                .createdAt(c.createdAt()).tags(c.tags());
    }

    static ArtifactVersion toVersion(ArtifactViews.VersionView v) {
        ArtifactVersion version = new ArtifactVersion().entity(v.entity()).project(v.project())
                .collection(v.collection()).type(v.type()).versionIndex(v.index()).version(v.version())
                .digest(v.digest()).description(v.description()).metadata(v.metadata()).size(v.size())
                .fileCount(v.fileCount()).aliases(v.aliases()).tags(v.tags()).reference(v.reference())
                .createdBy(v.createdBy()).createdAt(v.createdAt());
        if (v.files() != null) {
            version.files(v.files().stream().map(ArtifactMapper::toFile).toList());
        }
        if (v.registry() != null) {
            version.registry(v.registry()).source(v.source());
        }
        return version;
    }

    static ArtifactFile toFile(ArtifactViews.FileView f) {
        return new ArtifactFile().path(f.path()).size(f.size()).digest(f.digest()).contentType(f.contentType());
    }

    static VersionPage toPage(ArtifactViews.Page page) {
        return new VersionPage().versions(page.versions().stream().map(ArtifactMapper::toVersion).toList())
                .nextOffset(page.nextOffset());
    }

    static RegistryLink toLink(ArtifactViews.LinkView l) {
        return new RegistryLink().registry(l.registry()).collection(l.collection()).versionIndex(l.index())
                .version("v" + l.index()).source(l.source()).createdBy(l.createdBy()).createdAt(l.createdAt());
    }
}
