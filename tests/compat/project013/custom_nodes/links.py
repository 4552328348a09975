"""Link nodes written as Graphbook 0.13 function nodes (its web-scraper idioms, no network)."""

from graphbook import output, param, source, step


@step("Custom/LinkSource")
@source()
@param("url", type="string", default="http://127.0.0.1/index.html")
@output("url")
def link_source(ctx):
    """Yields its link on the output `url`: the next step receives the text itself.

    Args:
        url (str): the link
    """
    yield {"url": ctx.url}


@step("Custom/LinkList")
@source(is_generator=True)
@param("count", type="number", default=3)
@output("out")
def link_list(ctx):
    """Yields `count` links, one `{"out": link}` each."""
    for i in range(int(ctx.count)):
        yield {"out": f"http://127.0.0.1/page{i}.html"}


@step("Custom/TitleOf")
@output("out")
def title_of(ctx, url: str):
    """Logs the page name of a link and returns it; 0.13 ignores what it returns."""
    title = url.rsplit("/", 1)[-1]
    ctx.log(f"title of {url}: {title}")
    return title


@step("Custom/BySize")
@param("bad", type="string", default="")
@output("short", "long")
def by_size(ctx, url: str):
    """Routes a link by the length of its page name; the link named by `bad` is routed to an
    output this step does not have."""
    if url.endswith(ctx.bad) and ctx.bad:
        return "medium"
    return "short" if len(url.rsplit("/", 1)[-1]) < 10 else "long"
