import { ArrowLeft, ArrowRight, Calendar, Clock, FileText, User } from "lucide-react";
import { Link, useLocation, useSearchParams } from "react-router";
import { PageHero } from "../../components/Bands";
import { Picture, pictureHtml } from "../../components/Picture";
import { longDate, shortDate } from "../../lib/format";
import { matchRoute } from "../../lib/routes";
import type { BlogData, PageMeta, PageProps, Post, PostSummary, SiteImage } from "../../lib/types";

export function meta(data: BlogData | undefined): PageMeta {
  if (data?.post) {
    return { title: `${data.post.title} — Citizen Wallet Blog`, description: data.post.excerpt };
  }
  return {
    title: "Blog — Citizen Wallet",
    description: "News, features, events and partnerships from the team building wallets for community currencies.",
  };
}

/** What a new filter shows, said to a screen reader (the list's count). */
export function view(data: BlogData | undefined, search: URLSearchParams): string {
  const { active, filtered } = filterPosts(data?.posts ?? [], search.get("type"));
  if (filtered.length === 0) return "No posts found for the selected category";
  const what = active ? `${active} posts` : "All posts";
  return `${what}: ${filtered.length} shown`;
}

/** The posts of one type (spec section 4: exact match; All shows every
 *  post), and which type that is. */
function filterPosts(posts: PostSummary[], type: string | null) {
  const active = type && type !== "All" ? type : null;
  return { active, filtered: active ? posts.filter((p) => p.type === active) : posts };
}

/** The list and a single post share this screen (spec section 2). */
export default function Blog({ data, state }: PageProps<BlogData>) {
  const { pathname } = useLocation();
  const [params] = useSearchParams();
  const postId = matchRoute(pathname).params.postId;

  if (!data && state === "error") {
    return (
      <p role="alert" className="mx-auto max-w-7xl px-4 py-24 text-center text-slate-600">
        The posts could not be loaded. <a href={pathname} className="font-semibold text-brand-700 underline">Try again</a>
      </p>
    );
  }
  if (!data) return <Loading />;
  if (postId && data.post?.id === postId) return <SinglePost post={data.post} />;
  // A post that is still loading; an unknown id shows the list.
  if (postId && state === "loading") return <Loading />;
  return <PostList posts={data.posts} type={params.get("type")} />;
}

function Loading() {
  return <p className="mx-auto max-w-7xl px-4 py-24 text-center text-slate-600">Loading...</p>;
}

function SinglePost({ post }: { post: Post }) {
  return (
    <article className="mx-auto max-w-3xl px-4 py-12 sm:px-6">
      <Link to="/blog" className="inline-flex items-center gap-2 text-sm font-medium text-brand-700 hover:text-brand-600">
        <ArrowLeft className="h-4 w-4" aria-hidden="true" /> Back to Blog
      </Link>
      <header className="mt-6">
        <Badges post={post} />
        <h1 className="mt-4 text-4xl font-bold tracking-tight text-slate-900">{post.title}</h1>
        <PostFacts post={post} long />
      </header>
      {post.image && (
        // The post's largest paint: preloaded, fetched first. Shown whole,
        // at its own aspect ratio.
        <Picture image={post.image} alt="" layout="article" priority className="mt-8 h-auto w-full rounded-2xl bg-slate-100" />
      )}
      <div className="post-content mt-8" dangerouslySetInnerHTML={{ __html: withPictures(post.html, post.images) }} />
    </article>
  );
}

function PostList({ posts, type }: { posts: PostSummary[]; type: string | null }) {
  const types = [...new Set(posts.map((p) => p.type))];
  const { active, filtered } = filterPosts(posts, type);
  const [featured, ...rest] = filtered;

  return (
    <>
      <PageHero
        title="Citizen Wallet Blog"
        lead="Launches, new features, events and partnerships from the people building wallets for community currencies."
      />
      <div className="mx-auto max-w-7xl px-4 py-12 sm:px-6 lg:px-8">
        <nav aria-label="Filter posts by type" className="flex flex-wrap justify-center gap-2">
          {["All", ...types].map((t) => {
            const current = (t === "All" && !active) || t === active;
            return (
              <Link
                key={t}
                to={t === "All" ? "/blog" : `/blog?type=${encodeURIComponent(t)}`}
                aria-current={current ? "page" : undefined}
                className={`rounded-full px-4 py-2 text-sm font-medium ${
                  current ? "bg-brand-600 text-white" : "bg-slate-100 text-slate-700 hover:bg-slate-200"
                }`}
              >
                {t}
              </Link>
            );
          })}
        </nav>

        {featured ? (
          <section aria-labelledby="featured-heading" className="mt-12">
            <h2 id="featured-heading" className="text-sm font-semibold uppercase tracking-wide text-brand-700">
              Featured Post
            </h2>
            <article className="mt-4 grid overflow-hidden rounded-2xl border border-slate-200 bg-white shadow-sm md:grid-cols-2">
              <PostImage post={featured} eager />
              <div className="flex flex-col justify-center p-8">
                <Badges post={featured} />
                <h3 className="mt-4 text-2xl font-bold text-slate-900">{featured.title}</h3>
                <p className="mt-3 text-slate-600">{featured.excerpt}</p>
                <PostFacts post={featured} />
                <Link
                  to={`/blog/${featured.id}`}
                  className="mt-6 inline-flex items-center gap-2 font-semibold text-brand-700 hover:text-brand-600"
                >
                  Read Full Article <ArrowRight className="h-4 w-4" aria-hidden="true" />
                </Link>
              </div>
            </article>
          </section>
        ) : (
          <p className="mt-12 text-center text-slate-600">No posts found for the selected category</p>
        )}

        {rest.length > 0 && (
          <section aria-labelledby="latest-heading" className="mt-16">
            <h2 id="latest-heading" className="text-2xl font-bold text-slate-900">
              {active ? `${active} Posts` : "Latest Posts"}{" "}
              <span className="text-base font-normal text-slate-600">{`(${rest.length})`}</span>
            </h2>
            <div className="mt-6 grid gap-8 md:grid-cols-2">
              {rest.map((post) => (
                <article key={post.id} className="flex flex-col overflow-hidden rounded-2xl border border-slate-200 bg-white shadow-sm">
                  <PostImage post={post} />
                  <div className="flex flex-1 flex-col p-6">
                    <div className="flex items-center gap-3 text-sm text-slate-600">
                      <Badges post={post} />
                      <span className="inline-flex items-center gap-1">
                        <Clock className="h-4 w-4" aria-hidden="true" /> {post.readTime}
                      </span>
                    </div>
                    <h3 className="mt-3 text-xl font-semibold text-slate-900">{post.title}</h3>
                    <p className="mt-2 flex-1 text-slate-600">{post.excerpt}</p>
                    <div className="mt-4 flex items-center justify-between text-sm">
                      <time dateTime={post.date} className="text-slate-600">{shortDate(post.date)}</time>
                      <Link to={`/blog/${post.id}`} className="inline-flex items-center gap-1 font-semibold text-brand-700 hover:text-brand-600">
                        Read More<span className="sr-only">{`: ${post.title}`}</span>
                        <ArrowRight className="h-4 w-4" aria-hidden="true" />
                      </Link>
                    </div>
                  </div>
                </article>
              ))}
            </div>
          </section>
        )}
        {featured && rest.length === 0 && (
          <p className="mt-12 text-center text-slate-600">Only one post available in this category (shown above as featured)</p>
        )}
      </div>
    </>
  );
}

/** The post's text with each of its images of content/images/ (an `<img>`
 *  whose `src` the server resolved to one of `images`) drawn as
 *  `<Picture>` draws the cover: lazy, below the fold. The server's HTML is
 *  sanitized and serialized by ammonia, so each attribute is `name="value"`
 *  with `&` and `"` escaped. */
function withPictures(html: string, images: SiteImage[]): string {
  if (images.length === 0) return html;
  const bySrc = new Map(images.map((image) => [image.src, image]));
  return html.replace(/<img\s([^>]*)>/g, (tag, attrs: string) => {
    const attr = new Map([...attrs.matchAll(/([a-zA-Z-]+)="([^"]*)"/g)].map((m) => [m[1], unescapeAttribute(m[2])]));
    const image = bySrc.get(attr.get("src") ?? "");
    if (!image) return tag;
    return pictureHtml({ image, alt: attr.get("alt") ?? "", title: attr.get("title"), layout: "article", className: "h-auto max-w-full rounded-xl" });
  });
}

function unescapeAttribute(value: string): string {
  return value.replace(/&(quot|amp|lt|gt|nbsp);/g, (_, name: string) => ({ quot: '"', amp: "&", lt: "<", gt: ">", nbsp: "\u00a0" })[name] ?? "");
}

function PostImage({ post, eager }: { post: PostSummary; eager?: boolean }) {
  if (!post.image) {
    return (
      <div className="flex aspect-[2/1] items-center justify-center bg-gradient-to-br from-brand-100 to-emerald-100" aria-hidden="true">
        <FileText className="h-12 w-12 text-brand-600" />
      </div>
    );
  }
  // Every card crops its image to 2:1 (object-cover); the featured one
  // is the list's largest paint.
  return <Picture image={post.image} alt="" layout="card" priority={eager} className="aspect-[2/1] w-full bg-slate-100 object-cover" />;
}

/** The post's type, whether it is a draft, and when it goes live if its
 *  time has not come (only the dev server shows drafts and scheduled
 *  posts). */
function Badges({ post }: { post: PostSummary }) {
  return (
    <>
      <span className="inline-block rounded-full bg-brand-100 px-3 py-1 text-xs font-semibold text-brand-700">{post.type}</span>
      {post.draft && (
        <span className="ml-2 inline-block rounded-full bg-amber-100 px-3 py-1 text-xs font-semibold text-amber-800">Draft</span>
      )}
      {post.scheduled && (
        <span className="ml-2 inline-block rounded-full bg-amber-100 px-3 py-1 text-xs font-semibold text-amber-800">
          {`Scheduled: ${goesLive(post.date)}`}
        </span>
      )}
    </>
  );
}

/** A post's `date` as its label says when it goes live: "December 1, 2026,
 *  09:00 UTC+01:00", the time as written (a day alone is its start in UTC).
 *  No time zone of the server's or the reader's: the same text both sides. */
function goesLive(date: string): string {
  if (date.length === 10) return `${longDate(date)}, 00:00 UTC`;
  const zone = date.slice(19).replace(/^\.\d+/, "");
  return `${longDate(date)}, ${date.slice(11, 16)} UTC${zone === "Z" ? "" : zone}`;
}

function PostFacts({ post, long }: { post: PostSummary; long?: boolean }) {
  return (
    <div className="mt-4 flex flex-wrap items-center gap-4 text-sm text-slate-600">
      <span className="inline-flex items-center gap-1">
        <User className="h-4 w-4" aria-hidden="true" /> {post.author}
      </span>
      <span className="inline-flex items-center gap-1">
        <Calendar className="h-4 w-4" aria-hidden="true" />
        <time dateTime={post.date}>{long ? longDate(post.date) : shortDate(post.date)}</time>
      </span>
      <span className="inline-flex items-center gap-1">
        <Clock className="h-4 w-4" aria-hidden="true" /> {post.readTime}
      </span>
    </div>
  );
}
