"use client";
import Link from "next/link";
import { usePathname } from "next/navigation";

const PAGES = [
  { href: "/", label: "Overview" },
  { href: "/explorer/", label: "Explorer" },
  { href: "/graph/", label: "Graph" },
  { href: "/decay/", label: "Decay" },
  { href: "/timeline/", label: "Timeline" },
  { href: "/connect/", label: "Connect" },
] as const;

export function Nav() {
  const path = usePathname();
  const current = path.endsWith("/") ? path : `${path}/`;
  return (
    <nav className="nav" aria-label="Pages">
      {PAGES.map((page) => (
        <Link key={page.href} href={page.href} aria-current={current === page.href ? "page" : undefined}>
          {page.label}
        </Link>
      ))}
    </nav>
  );
}
