package dev.fulcrum.datasets;

import java.util.Optional;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;
import jakarta.transaction.Transactional;

import dev.fulcrum.accounts.Access;
import dev.fulcrum.accounts.Access.ProjectRef;
import dev.fulcrum.platform.errors.ApiException;
import dev.fulcrum.platform.errors.ApiException.Violation;

/** Weave's files in {@code weave_files}, by the row-digest function over their bytes, once per project. */
@ApplicationScoped
public class WeaveFiles {

    @Inject
    Access access;

    @Inject
    DatasetStatements statements;

    /** Stores the content (a member's write); answers its digest. */
    @Transactional
    public String create(WeaveObjects.ProjectName name, String fileName, byte[] content, String expectedDigest) {
        String digest = Digests.ofBytes(content);
        if (expectedDigest != null && !expectedDigest.isEmpty() && !expectedDigest.equals(digest)) {
            throw ApiException.invalid(
                    Violation.of("The content's digest is " + digest, "value_error", "body", "expected_digest"));
        }
        ProjectRef ref = access.writableProject(name.entity(), name.project());
        statements.storeFile(ref.projectId(), digest, fileName == null ? "file" : fileName, content);
        return digest;
    }

    /** The content of a file of the project; 404 when it has none of this digest. */
    @Transactional
    public byte[] content(WeaveObjects.ProjectName name, String digest) {
        ProjectRef ref = access.readableProject(name.entity(), name.project());
        Optional<byte[]> content = statements.fileContent(ref.projectId(), digest == null ? "" : digest);
        return content.orElseThrow(() -> ApiException.notFound("File " + digest + " not found"));
    }
}
