package dev.fulcrum.automations;

import java.net.InetAddress;
import java.net.URI;
import java.net.URISyntaxException;
import java.net.UnknownHostException;
import java.util.ArrayList;
import java.util.List;
import java.util.Locale;
import java.util.regex.Pattern;

import jakarta.enterprise.context.ApplicationScoped;
import jakarta.inject.Inject;

import dev.fulcrum.platform.errors.ApiException;
import dev.fulcrum.platform.errors.ApiException.Violation;

/**
 * Keeps outgoing webhook requests away from the server's own networks. The endpoint's host is resolved, every address
 * it resolves to is checked (one bad address refuses the whole host, so a name with a public and a private address
 * cannot be used to reach the private one), and the request is then sent to the checked address (no second lookup, so
 * no DNS rebinding). Refused unless in {@code fulcrum.webhooks.allowed-networks}: loopback, unspecified, private (10/8,
 * 172.16/12, 192.168/16), CGNAT (100.64/10), link-local (169.254/16 with the cloud metadata address), reserved,
 * documentation and benchmarking ranges, multicast, broadcast, IPv6 unique-local (fc00::/7), link-local (fe80::/10),
 * site-local, multicast, and IPv4 addresses embedded in IPv6 (mapped, compatible, NAT64 and 6to4) by the IPv4 rules.
 * <p>
 * An IPv4 address must be written in canonical dotted-decimal form (four decimal numbers 0-255 without leading zeros):
 * {@code 0177.0.0.1}, {@code 0x7f.1}, {@code 127.1} or {@code 2130706433} are read differently by different software
 * (Java reads {@code 0177.0.0.1} as 177.0.0.1, curl and browsers as 127.0.0.1), so a host whose last label is a number
 * is refused unless the whole host is a canonical address. The URL is checked the same way when a webhook is saved,
 * tested and sent.
 */
@ApplicationScoped
public class SsrfGuard {

    private static final Pattern IPV4_LITERAL = Pattern
            .compile("(0[xX][0-9a-fA-F]+|[0-9]+)(\\.(0[xX][0-9a-fA-F]+|[0-9]+)){0,3}");

    private static final Pattern CANONICAL_IPV4 = Pattern.compile(
            "(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9][0-9]|[0-9])(\\.(25[0-5]|2[0-4][0-9]|1[0-9][0-9]|[1-9][0-9]|[0-9])){3}");

    /** A last label that URL parsers (WHATWG) take for a number: the host is then read as an IPv4 address. */
    private static final Pattern NUMERIC_LABEL = Pattern.compile("(0[xX][0-9a-fA-F]*|[0-9]+)");

    private static final List<Block> BLOCKED = List.of(
            // IPv4
            new Block("0.0.0.0/8", "an unspecified address"), new Block("10.0.0.0/8", "a private address"),
            new Block("100.64.0.0/10", "a carrier-grade NAT address"), new Block("127.0.0.0/8", "a loopback address"),
            new Block("169.254.169.254/32", "the cloud metadata address"),
            new Block("169.254.0.0/16", "a link-local address"), new Block("172.16.0.0/12", "a private address"),
            new Block("192.0.0.0/24", "an IETF protocol address"), new Block("192.0.2.0/24", "a documentation address"),
            new Block("192.88.99.0/24", "a 6to4 relay address"), new Block("192.168.0.0/16", "a private address"),
            new Block("198.18.0.0/15", "a benchmarking address"),
            new Block("198.51.100.0/24", "a documentation address"),
            new Block("203.0.113.0/24", "a documentation address"), new Block("224.0.0.0/4", "a multicast address"),
            new Block("255.255.255.255/32", "the broadcast address"), new Block("240.0.0.0/4", "a reserved address"),
            // IPv6
            new Block("::/128", "an unspecified address"), new Block("::1/128", "a loopback address"),
            new Block("fc00::/7", "a unique-local address"), new Block("fe80::/10", "a link-local address"),
            new Block("fec0::/10", "a site-local address"), new Block("ff00::/8", "a multicast address"),
            new Block("2001:db8::/32", "a documentation address"), new Block("100::/64", "a discard address"));

    private final boolean allowHttp;
    private final List<Cidr> allowed;

    @Inject
    public SsrfGuard(WebhooksConfig config) {
        this(config.allowHttp(), config.allowedNetworks().orElse(List.of()));
    }

    /** A guard with its own settings (for tests and tools). */
    public SsrfGuard(boolean allowHttp, List<String> allowedNetworks) {
        this.allowHttp = allowHttp;
        List<Cidr> cidrs = new ArrayList<>();
        for (String network : allowedNetworks) {
            if (!network.isBlank()) {
                cidrs.add(Cidr.parse(network.strip()));
            }
        }
        this.allowed = List.copyOf(cidrs);
    }

    /** Why a request to an endpoint was not sent. The message is safe to show. */
    public static class Refused extends Exception {
        public Refused(String message) {
            super(message, null, false, false);
        }
    }

    /** Where to send: the URL as given (for the Host header and TLS name) and the checked address to connect to. */
    public record Target(URI uri, String host, int port, boolean tls, String requestUri, InetAddress address) {
    }

    /**
     * The endpoint URL when it may be saved: absolute {@code https} ({@code http} only when allowed), with a host, no
     * user info, and, when the host is an IP address, one the guard accepts. 422 at {@code loc} otherwise.
     */
    public URI checkUrl(String url, Object... loc) {
        try {
            URI uri = parseUrl(url);
            String host = bareHost(uri);
            if (isIpLiteral(host)) {
                check(host, List.of(InetAddress.getByName(host)));
            }
            return uri;
        } catch (Refused | UnknownHostException e) {
            throw ApiException.invalid(Violation.of(e.getMessage(), "url", loc));
        }
    }

    /** Resolves the endpoint's host and checks every address; the target connects to the first one. */
    public Target resolve(String url) throws Refused {
        URI uri = parseUrl(url);
        String host = bareHost(uri);
        InetAddress[] addresses;
        try {
            addresses = InetAddress.getAllByName(host);
        } catch (UnknownHostException e) {
            throw new Refused("The host " + host + " does not resolve");
        }
        check(host, List.of(addresses));
        boolean tls = "https".equals(uri.getScheme().toLowerCase(Locale.ROOT));
        int port = uri.getPort() == -1 ? (tls ? 443 : 80) : uri.getPort();
        String path = uri.getRawPath() == null || uri.getRawPath().isEmpty() ? "/" : uri.getRawPath();
        String requestUri = uri.getRawQuery() == null ? path : path + "?" + uri.getRawQuery();
        return new Target(uri, host, port, tls, requestUri, addresses[0]);
    }

    /** Refuses the host when any of its addresses is refused. */
    void check(String host, List<InetAddress> addresses) throws Refused {
        for (InetAddress address : addresses) {
            String reason = refusal(address);
            if (reason != null) {
                throw new Refused("The host " + host + " resolves to " + address.getHostAddress() + ", " + reason
                        + "; webhooks may not reach it unless fulcrum.webhooks.allowed-networks allows it");
            }
        }
    }

    /** Why this address is refused, or null when it may be reached. */
    String refusal(InetAddress address) {
        byte[] bytes = address.getAddress();
        byte[] embedded = embeddedIpv4(bytes);
        if (isAllowed(bytes) || embedded != null && isAllowed(embedded)) {
            return null;
        }
        if (embedded != null) {
            String inner = reason(embedded);
            if (inner != null) {
                return inner + " embedded in an IPv6 address";
            }
        }
        return reason(bytes);
    }

    private boolean isAllowed(byte[] bytes) {
        for (Cidr cidr : allowed) {
            if (cidr.contains(bytes)) {
                return true;
            }
        }
        return false;
    }

    private static String reason(byte[] bytes) {
        for (Block block : BLOCKED) {
            if (block.cidr.contains(bytes)) {
                return block.reason;
            }
        }
        return null;
    }

    /** The IPv4 address inside an IPv4-mapped, -compatible, NAT64 (64:ff9b::/96, 64:ff9b:1::/48) or 6to4 address. */
    static byte[] embeddedIpv4(byte[] a) {
        if (a.length != 16) {
            return null;
        }
        if (zero(a, 0, 10) && (a[10] & 0xff) == 0xff && (a[11] & 0xff) == 0xff) {
            return tail(a); // ::ffff:a.b.c.d
        }
        if (zero(a, 0, 12) && !(zero(a, 12, 15) && (a[15] == 0 || a[15] == 1))) {
            return tail(a); // ::a.b.c.d (not :: or ::1)
        }
        if (a[0] == 0 && a[1] == 0x64 && (a[2] & 0xff) == 0xff && (a[3] & 0xff) == 0x9b
                && (zero(a, 4, 12) || a[4] == 0 && a[5] == 1)) {
            return tail(a); // NAT64 well-known and local-use prefixes
        }
        if (a[0] == 0x20 && a[1] == 0x02) {
            return new byte[] { a[2], a[3], a[4], a[5] }; // 6to4
        }
        return null;
    }

    private static boolean zero(byte[] a, int from, int to) {
        for (int i = from; i < to; i++) {
            if (a[i] != 0) {
                return false;
            }
        }
        return true;
    }

    private static byte[] tail(byte[] a) {
        return new byte[] { a[12], a[13], a[14], a[15] };
    }

    private URI parseUrl(String url) throws Refused {
        URI uri;
        try {
            uri = new URI(url == null ? "" : url.strip());
        } catch (URISyntaxException e) {
            throw new Refused("The endpoint URL is not a valid URL: " + e.getReason());
        }
        String scheme = uri.getScheme() == null ? "" : uri.getScheme().toLowerCase(Locale.ROOT);
        if (!scheme.equals("https") && !(allowHttp && scheme.equals("http"))) {
            throw new Refused(allowHttp ? "The endpoint URL must start with https:// or http://"
                    : "The endpoint URL must start with https:// (http is not allowed on this server)");
        }
        if (uri.getHost() == null || uri.getHost().isEmpty()) {
            // java.net.URI gives no host for names it cannot parse, such as 127.0.0.1. or 1.2.3.4.5
            String authority = uri.getRawAuthority() == null ? "" : uri.getRawAuthority();
            String named = authority.substring(authority.lastIndexOf('@') + 1).replaceFirst(":[0-9]*$", "");
            throw new Refused(!named.isEmpty() && !named.startsWith("[") && looksNumeric(named) ? notCanonical(named)
                    : "The endpoint URL has no host");
        }
        if (uri.getRawUserInfo() != null) {
            throw new Refused("The endpoint URL may not hold credentials; use the webhook's access token");
        }
        String host = uri.getHost();
        if (!host.startsWith("[") && looksNumeric(host) && !CANONICAL_IPV4.matcher(host).matches()) {
            throw new Refused(notCanonical(host));
        }
        return uri;
    }

    private static String notCanonical(String host) {
        return "The host " + host + " is not an IPv4 address in canonical dotted-decimal form (four numbers 0-255 "
                + "without leading zeros, e.g. 192.0.2.10): other forms such as 0177.0.0.1, 0x7f.1, 127.1 or "
                + "2130706433 are read as different addresses by different software";
    }

    /** Whether URL parsers read the host as an IPv4 address: its last label (a trailing dot aside) is a number. */
    static boolean looksNumeric(String host) {
        String name = host.endsWith(".") ? host.substring(0, host.length() - 1) : host;
        String last = name.substring(name.lastIndexOf('.') + 1);
        return NUMERIC_LABEL.matcher(last).matches() || IPV4_LITERAL.matcher(name).matches();
    }

    private static String bareHost(URI uri) {
        String host = uri.getHost();
        return host.startsWith("[") && host.endsWith("]") ? host.substring(1, host.length() - 1) : host;
    }

    private static boolean isIpLiteral(String host) {
        return host.contains(":") || IPV4_LITERAL.matcher(host).matches();
    }

    private record Block(Cidr cidr, String reason) {
        Block(String cidr, String reason) {
            this(Cidr.parse(cidr), reason);
        }
    }

    /** An address block, IPv4 or IPv6. */
    record Cidr(byte[] network, int prefix) {

        static Cidr parse(String text) {
            int slash = text.indexOf('/');
            String address = slash < 0 ? text : text.substring(0, slash);
            try {
                if (!isIpLiteral(address)) {
                    throw new IllegalArgumentException("Not an IP network: " + text);
                }
                byte[] bytes = InetAddress.getByName(address).getAddress();
                int prefix = slash < 0 ? bytes.length * 8 : Integer.parseInt(text.substring(slash + 1));
                if (prefix < 0 || prefix > bytes.length * 8) {
                    throw new IllegalArgumentException("Bad prefix length in " + text);
                }
                return new Cidr(bytes, prefix);
            } catch (UnknownHostException | NumberFormatException e) {
                throw new IllegalArgumentException("Not an IP network: " + text, e);
            }
        }

        boolean contains(byte[] address) {
            if (address.length != network.length) {
                return false;
            }
            int full = prefix / 8;
            for (int i = 0; i < full; i++) {
                if (address[i] != network[i]) {
                    return false;
                }
            }
            int rest = prefix % 8;
            if (rest == 0) {
                return true;
            }
            int mask = (0xff << (8 - rest)) & 0xff;
            return (address[full] & mask) == (network[full] & mask);
        }
    }
}
