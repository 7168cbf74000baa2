"""The tables: users, articles and their bodies, tags, article_tags, deliveries, and the outgoing webhooks'
endpoints, events and attempts.

No model has a database of its own: queries bind explicitly. Times are naive UTC with microseconds
(``DATETIME(6)`` on MySQL, where a bare DATETIME would drop the fraction and make two updates in the
same second look equal). Text columns are utf8mb4 on MySQL whatever the server's default; keys that
name things in the repository (slugs, paths, tag paths) compare byte-exact, as they do on SQLite and
in git, so ``Foo`` and ``foo`` are two articles.

A change to a table here (a column, an index, a new table) comes with a migration step that makes the
same change to the databases that exist: ``function.store.migrations.steps``.
"""

from __future__ import annotations

import peewee

# The column types and the base model, in a module of their own so that a table can be declared in
# another module too; re-exported here, where the rest of the store has always found them.
from function.store.columns import BaseModel as BaseModel
from function.store.columns import LongBlobField as LongBlobField
from function.store.columns import LongTextField as LongTextField
from function.store.columns import StringField as StringField
from function.store.columns import TextKeyField as TextKeyField
from function.store.columns import TextKeyReference as TextKeyReference
from function.store.columns import UtcDateTimeField as UtcDateTimeField
from function.store.columns import Utf8TextField as Utf8TextField
from function.store.columns import to_naive_utc as to_naive_utc
from function.store.columns import utc_now as utc_now
from function.store.records import Outcome
from function.webhooks.envelope import DELIVERY_ID_MAX_CHARS, EVENT_MAX_CHARS

OUTCOMES = tuple(outcome.value for outcome in Outcome)
ERROR_MAX_CHARS = 4000


class User(BaseModel):
    id = peewee.AutoField()
    name = TextKeyField(max_length=100, unique=True)
    email = StringField(max_length=255)
    github_installation_id = peewee.BigIntegerField(null=True, unique=True)
    repository = StringField(max_length=255, null=True)  # "owner/name": the one repository followed
    # GitHub's id of that repository, learned from its first push: a renamed or re-created repository
    # with the same name is another repository, and only the id says so.
    repository_id = peewee.BigIntegerField(null=True)
    created_at = UtcDateTimeField(default=utc_now)
    # GitHub's numeric id of the account the user's installations are on: set by the first
    # installation linked, then only that account links the user (a login can be renamed and reused).
    github_account_id = peewee.BigIntegerField(null=True)
    # What the user's articles are synced from, recorded by their first sync (function.worker.sync.binding):
    # "github" (the repository above), or "dir:" and a folder's resolved path. Null: not bound yet.
    source = Utf8TextField(null=True)
    # How many served articles a person agreed one sync may archive at once (``--confirm-removal`` of a
    # redelivery, function.worker.sync.mass_removal); the sync that archives them clears it. Null: none.
    removal_confirmed = peewee.IntegerField(null=True)

    class Meta:
        table_name = "users"


class Article(BaseModel):
    id = peewee.AutoField()
    # No separate index on user_id: the unique (user_id, slug) index starts with it.
    user = peewee.ForeignKeyField(User, on_delete="CASCADE", column_name="user_id", index=False)
    slug = TextKeyField(max_length=255)
    path = TextKeyField(max_length=1024)
    blob_sha = StringField(max_length=64)
    title = Utf8TextField()
    type = TextKeyField(max_length=100, null=True)  # filtered on: exact on both backends
    description = Utf8TextField(null=True)
    thumbnail = Utf8TextField(null=True)
    emoji = StringField(max_length=64, null=True)
    # The Markdown, the HTML and the table of contents live in ``article_bodies`` (``ArticleBody``).
    content_hash = StringField(max_length=64)
    # sha256 of the sorted tag paths: lets a content change skip the tag tables when tags are the same.
    tags_hash = StringField(max_length=64, default="")
    # What the HTML was rendered with (``function.articles.render_fingerprint``): a sync renders the
    # article again when it is not the running code's. Null: rendered before it was recorded.
    render_fingerprint = StringField(max_length=32, null=True)
    # sha256 of the HTML and the table of contents (``write_plan.output_hash``): whether a new render
    # changed what readers get. Null only on a row the migration has not reached.
    output_hash = StringField(max_length=64, null=True)
    publish = peewee.BooleanField(default=False)
    archived = peewee.BooleanField(default=False)
    published_at = UtcDateTimeField(null=True)
    archived_at = UtcDateTimeField(null=True)
    created_at = UtcDateTimeField()
    updated_at = UtcDateTimeField()

    class Meta:
        table_name = "articles"
        indexes = (
            (("user", "slug"), True),
            # The read routes: one user's published, live articles, newest first, ties by slug: the
            # index's own order is the lists' order, so a page reads its rows and stops (without the
            # slug, every published row is read and sorted for the tie-break).
            (("user", "publish", "archived", "published_at", "slug"), False),
        )


class ArticleBody(BaseModel):
    """What a reader reads of an article in full, one row per article, apart from its index row.

    TiDB stores a row as one key-value pair: reading any column of a row reads all of it. Kept in
    ``articles``, the Markdown, HTML and table of contents (about 160 KB for a real article) would be
    read by every statement that reads the index: a push's index of the repository, each list page,
    the tag facets, the sitemap. Here, only an article's own page and the feed's content read them.
    Written in the transaction that writes the article's row; deleted with it (cascade)."""

    article = peewee.ForeignKeyField(Article, primary_key=True, on_delete="CASCADE", column_name="article_id")
    content = LongTextField()
    content_html = LongTextField()
    # The table of contents as JSON ([{"level", "id", "text"}]); null: written before it existed.
    toc = LongTextField(null=True)

    class Meta:
        table_name = "article_bodies"


class Tag(BaseModel):
    """A tag of one user's articles. Each user has their own rows, even for the same path: a row two
    blogs shared was locked by both their syncs (TiDB's foreign-key check on ``article_tags`` locks the
    parent row as ``SELECT … FOR UPDATE`` does, and its ``INSERT IGNORE`` locks the unique key it finds),
    so blogs sharing a popular tag waited for each other."""

    id = peewee.AutoField()
    # Null only on a row a migration has not reached: every tag is written with its user. No separate
    # index: the unique (user_id, path) index starts with it.
    user = peewee.ForeignKeyField(User, on_delete="CASCADE", column_name="user_id", index=False, null=True)
    path = TextKeyField(max_length=255)  # "tech/aws/lambda"

    class Meta:
        table_name = "tags"
        indexes = ((("user", "path"), True),)


class ArticleTag(BaseModel):
    # No separate index on article_id: the primary key (article_id, tag_id) starts with it.
    article = peewee.ForeignKeyField(Article, on_delete="CASCADE", column_name="article_id", index=False)
    tag = peewee.ForeignKeyField(Tag, on_delete="CASCADE", column_name="tag_id", index=True)

    class Meta:
        table_name = "article_tags"
        # The pair is the key: no AUTO_INCREMENT id that anyone could be tempted to order by.
        primary_key = peewee.CompositeKey("article", "tag")


class FailedFile(BaseModel):
    """An article file that failed to parse, by blob: while its blob is the same, a push neither fetches
    nor parses it again (git blobs are immutable, so the reason cannot change); it is reported from here."""

    user = peewee.ForeignKeyField(User, on_delete="CASCADE", column_name="user_id", index=False)
    slug = TextKeyField(max_length=255)
    path = TextKeyField(max_length=1024)
    blob_sha = StringField(max_length=64)
    message = Utf8TextField()

    class Meta:
        table_name = "failed_files"
        primary_key = peewee.CompositeKey("user", "slug")


class Delivery(BaseModel):
    delivery_id = TextKeyField(max_length=DELIVERY_ID_MAX_CHARS, primary_key=True)  # X-GitHub-Delivery
    event = StringField(max_length=EVENT_MAX_CHARS)
    installation_id = peewee.BigIntegerField(null=True)
    repository = StringField(max_length=255, null=True)
    received_at = UtcDateTimeField(index=True)
    started_at = UtcDateTimeField()
    finished_at = UtcDateTimeField(null=True)
    head_sha = StringField(max_length=64, null=True)
    processed = peewee.IntegerField(default=0)
    succeeded = peewee.IntegerField(default=0)
    failed = peewee.IntegerField(default=0)
    archived = peewee.IntegerField(default=0)
    outcome = StringField(max_length=16, choices=[(o, o) for o in OUTCOMES])
    error = Utf8TextField(null=True)
    attempts = peewee.IntegerField(default=1)
    # What the delivery changed (rows written, articles in sync untouched). NULL on rows recorded by a
    # version that did not count them.
    written = peewee.IntegerField(null=True)
    unchanged = peewee.IntegerField(null=True)
    # Whether a failure may pass on a retry (``DeliveryRecord.retryable``); NULL reads as false.
    retryable = peewee.BooleanField(null=True)

    class Meta:
        table_name = "deliveries"
        indexes = (
            # ``last_sync``: one repository's deliveries, newest first, read from the top of the index
            # (the delivery id breaks ties, as the query orders them).
            (("installation_id", "repository", "started_at", "delivery_id"), False),
        )


# Where the redelivery sweep stopped (see function.store.sweep_state).
class SweepState(BaseModel):
    name = TextKeyField(max_length=64, primary_key=True)
    last_delivery_id = peewee.BigIntegerField()
    last_delivered_at = UtcDateTimeField()
    last_run_at = UtcDateTimeField()

    class Meta:
        table_name = "sweep_state"


# Keys the server made for itself (see function.store.server_keys): random bytes nobody types.
class ServerKey(BaseModel):
    name = TextKeyField(max_length=64, primary_key=True)
    value = StringField(max_length=128)  # hex
    created_at = UtcDateTimeField(default=utc_now)

    class Meta:
        table_name = "server_keys"


class HookEndpoint(BaseModel):
    """A front end's webhook receiver: where to POST, what it subscribed to, its signing secrets, its
    health, and who is sending to it right now (``sending_until``: one sender per endpoint at a time)."""

    id = TextKeyField(max_length=32, primary_key=True)  # "ep_" + hex
    user = peewee.ForeignKeyField(User, on_delete="CASCADE", column_name="user_id", index=True)
    url = Utf8TextField()
    events = StringField(max_length=255)  # comma-separated event types
    secret = StringField(max_length=128)  # whsec_...: the function must sign with it, so it is kept as is
    previous_secret = StringField(max_length=128, null=True)  # still signed with until the time below
    previous_secret_until = UtcDateTimeField(null=True)
    created_at = UtcDateTimeField()
    failing_since = UtcDateTimeField(null=True)  # first failed attempt since the last success
    disabled_at = UtcDateTimeField(null=True)
    disabled_reason = Utf8TextField(null=True)
    sending_until = UtcDateTimeField(null=True)
    # Written first by every transaction that queues an event for the endpoint: the row lock (the write
    # lock on SQLite) makes two such transactions take turns, so they never both add a pending event.
    queued_at = UtcDateTimeField(null=True)

    class Meta:
        table_name = "hook_endpoints"


HOOK_EVENT_STATES = ("pending", "sending", "delivered", "failed")


class HookEvent(BaseModel):
    """One message for one endpoint. Changes that arrive while it is pending (or being sent) are merged
    into it: ``revision`` counts them, and each merge gives it a new ``message_id`` (webhook-id)."""

    id = TextKeyField(max_length=32, primary_key=True)  # "evt_" + hex
    # No separate index on endpoint_id: the (endpoint, state, next_attempt_at) index starts with it.
    endpoint = TextKeyReference(HookEndpoint, on_delete="CASCADE", column_name="endpoint_id", index=False)
    type = StringField(max_length=32)
    message_id = TextKeyField(max_length=40)
    data = LongTextField()  # the body's "data", JSON
    state = StringField(max_length=16, choices=[(s, s) for s in HOOK_EVENT_STATES])
    revision = peewee.IntegerField(default=1)
    attempts = peewee.IntegerField(default=0)
    next_attempt_at = UtcDateTimeField(null=True)
    created_at = UtcDateTimeField()
    updated_at = UtcDateTimeField()  # when its data last changed: the body's "timestamp"
    delivered_at = UtcDateTimeField(null=True)
    source = StringField(max_length=DELIVERY_ID_MAX_CHARS, null=True)  # the delivery that last changed it

    class Meta:
        table_name = "hook_events"
        indexes = (
            (("endpoint", "state", "next_attempt_at"), False),
            # The sweep: every endpoint with a due event.
            (("state", "next_attempt_at"), False),
        )


class HookAttempt(BaseModel):
    """One POST of an event: what came back (status, the first KB of the body) or why nothing did."""

    id = TextKeyField(max_length=32, primary_key=True)  # "att_" + hex
    event = TextKeyReference(HookEvent, on_delete="CASCADE", column_name="event_id", index=True)
    endpoint = TextKeyReference(HookEndpoint, on_delete="CASCADE", column_name="endpoint_id", index=False)
    message_id = TextKeyField(max_length=40)
    number = peewee.IntegerField()
    attempted_at = UtcDateTimeField(index=True)
    status_code = peewee.IntegerField(null=True)
    ok = peewee.BooleanField()
    error = Utf8TextField(null=True)
    duration_ms = peewee.FloatField()
    answer = Utf8TextField(null=True)

    class Meta:
        table_name = "hook_attempts"
        indexes = ((("endpoint", "attempted_at"), False),)


class Asset(BaseModel):
    """A repository file served to readers as an image (``function.assets``), by path: the blob it was
    synced at, and the content-addressed key it is stored under (None: refused, ``problem`` says why;
    kept so that a blob that is too big or not an image is not downloaded again)."""

    user = peewee.ForeignKeyField(User, on_delete="CASCADE", column_name="user_id", index=False)
    # 512 characters: the (user, path) key stays within MySQL's 3072-byte index limit in utf8mb4.
    path = TextKeyField(max_length=512)
    blob_sha = StringField(max_length=64)
    key = StringField(max_length=80, null=True, index=True)  # "<sha256>.<ext>"
    sha256 = StringField(max_length=64, null=True)
    size = peewee.BigIntegerField(null=True)
    content_type = StringField(max_length=32, null=True)
    problem = Utf8TextField(null=True)
    seen_at = UtcDateTimeField()  # last synced in the tree listing
    gone_at = UtcDateTimeField(null=True)  # when a complete listing first lacked it

    class Meta:
        table_name = "assets"
        primary_key = peewee.CompositeKey("user", "path")


class AssetReference(BaseModel):
    """The repository files one article points at, as JSON ``{path: blob sha or null}`` (the blob the
    article was rendered with): an article is rendered again when one of them changes."""

    user = peewee.ForeignKeyField(User, on_delete="CASCADE", column_name="user_id", index=False)
    slug = TextKeyField(max_length=255)
    paths = LongTextField()

    class Meta:
        table_name = "asset_references"
        primary_key = peewee.CompositeKey("user", "slug")


MODELS: tuple[type[BaseModel], ...] = (
    User,
    Tag,
    Article,
    ArticleBody,
    ArticleTag,
    FailedFile,
    Delivery,
    SweepState,
    HookEndpoint,
    HookEvent,
    HookAttempt,
    Asset,
    AssetReference,
    ServerKey,
)


# --- Zenn books: a book per folder books/<slug>/, its chapters, and the books that failed -------------


class Book(BaseModel):
    """A Zenn book: what its ``config.yaml`` says (``config``: the parsed form as JSON, so a push that
    changes only a chapter needs not fetch the config again) and where its files are."""

    id = peewee.AutoField()
    # No separate index on user_id: the unique (user_id, slug) index starts with it.
    user = peewee.ForeignKeyField(User, on_delete="CASCADE", column_name="user_id", index=False)
    slug = TextKeyField(max_length=64)
    config_path = TextKeyField(max_length=1024)
    config_sha = StringField(max_length=64)
    config = LongTextField()
    title = Utf8TextField()
    summary = Utf8TextField()
    tags = Utf8TextField()  # JSON list of tag paths
    cover = Utf8TextField(null=True)  # repository path of cover.png/.jpg/...
    cover_sha = StringField(max_length=64, null=True)
    # The cover's stored reference (``asset:<key>``, a URL only when served) when blog-api stores the
    # repository's images (``cover`` stays the path: the sync compares it with the listing); None: the
    # path is what readers get.
    cover_url = Utf8TextField(null=True)
    chapter_count = peewee.IntegerField(default=0)
    content_hash = StringField(max_length=64)
    # What the book was written with (``function.articles.render_fingerprint``), as for articles.
    render_fingerprint = StringField(max_length=32, null=True)
    publish = peewee.BooleanField(default=False)
    archived = peewee.BooleanField(default=False)
    published_at = UtcDateTimeField(null=True)
    archived_at = UtcDateTimeField(null=True)
    created_at = UtcDateTimeField()
    updated_at = UtcDateTimeField()

    class Meta:
        table_name = "books"
        indexes = (
            (("user", "slug"), True),
            (("user", "publish", "archived", "published_at"), False),
        )


class BookChapter(BaseModel):
    id = peewee.AutoField()
    # No separate index on book_id: the unique (book_id, slug) index starts with it.
    book = peewee.ForeignKeyField(Book, on_delete="CASCADE", column_name="book_id", index=False)
    slug = TextKeyField(max_length=64)
    path = TextKeyField(max_length=1024)
    blob_sha = StringField(max_length=64)
    title = Utf8TextField()
    position = peewee.IntegerField()
    content = LongTextField()
    content_html = LongTextField()
    toc = LongTextField()  # JSON [{"level", "id", "text"}]
    content_hash = StringField(max_length=64)
    # What the HTML was rendered with, and its hash, as for articles.
    render_fingerprint = StringField(max_length=32, null=True)
    output_hash = StringField(max_length=64, null=True)
    created_at = UtcDateTimeField()
    updated_at = UtcDateTimeField()

    class Meta:
        table_name = "book_chapters"
        indexes = ((("book", "slug"), True),)


class FailedBook(BaseModel):
    """A book that failed to parse, by the file that broke it and that file's blob: while that file is
    unchanged, a push neither fetches nor parses the book again; it is reported from here."""

    user = peewee.ForeignKeyField(User, on_delete="CASCADE", column_name="user_id", index=False)
    slug = TextKeyField(max_length=255)
    path = TextKeyField(max_length=1024)
    blob_sha = StringField(max_length=64)
    message = Utf8TextField()

    class Meta:
        table_name = "failed_books"
        primary_key = peewee.CompositeKey("user", "slug")


MODELS = (*MODELS, Book, BookChapter, FailedBook)


# --- The lexical search index (function.search): kept by the sync, in the article's transaction -------


class SearchDocument(BaseModel):
    """One indexed article: its number in the user's index (``doc``, kept while this row exists), its
    weighted length (``function.search.lexical``), its distinct terms (zlib-compressed, one a line: the
    postings an edit or a removal must rewrite, found without scanning) and what it was indexed from.
    Keyed like the article, by (user, slug): the sync writes it in the same statements as a new
    article, before the article's id is known."""

    user = peewee.ForeignKeyField(User, on_delete="CASCADE", column_name="user_id", index=False)
    slug = TextKeyField(max_length=255)
    doc = peewee.IntegerField()
    length = peewee.IntegerField()
    terms = LongBlobField()
    content_hash = StringField(max_length=64)  # the article's, when it was indexed
    version = peewee.IntegerField()  # function.search.lexical.INDEX_VERSION it was indexed with

    class Meta:
        table_name = "search_documents"
        primary_key = peewee.CompositeKey("user", "slug")
        indexes = (
            (("user", "doc"), True),
            # Covering what a query reads of every article (its number by slug, the lengths' sum), so
            # it never reads the rows with their terms (kilobytes each).
            (("user", "slug", "doc", "length"), False),
        )


class SearchPosting(BaseModel):
    """One term's entries for one block of document numbers (``function.search.postings``): packed
    records (doc, weighted frequency, weighted length) of the block's articles holding the term."""

    user = peewee.ForeignKeyField(User, on_delete="CASCADE", column_name="user_id", index=False)
    term = TextKeyField(max_length=64)
    block = peewee.IntegerField()
    postings = peewee.BlobField()  # at most BLOCK_DOCS records of 10 bytes

    class Meta:
        table_name = "search_postings"
        # Term first: a query reads each of its terms' rows as one range of the primary key, in the
        # table's own order where the primary key is the clustered index (InnoDB, TiDB).
        primary_key = peewee.CompositeKey("user", "term", "block")


MODELS = (*MODELS, SearchDocument, SearchPosting)


# --- Semantic search: each served article's chunks and their vectors (function.embeddings) ------


class ArticleEmbedding(BaseModel):
    """What an article's stored vectors were computed from: the article's ``content_hash`` then, a hash
    of its text (title, description, body: a change of tags alone embeds nothing again), the chunker's
    version and the model. The vectors are computed again when the text, the chunking or the model
    changes; until then the ones stored are searched."""

    article = peewee.ForeignKeyField(Article, on_delete="CASCADE", column_name="article_id", primary_key=True)
    article_hash = StringField(max_length=64)
    text_hash = StringField(max_length=64)
    chunking = StringField(max_length=128)
    model = StringField(max_length=191)
    dimensions = peewee.IntegerField()
    chunk_count = peewee.IntegerField()
    embedded_at = UtcDateTimeField()

    class Meta:
        table_name = "article_embeddings"


class ArticleChunk(BaseModel):
    """One chunk of an article and its vector: float32 values packed little-endian (4 bytes a dimension:
    4 KB for 1,024), read back with ``numpy.frombuffer`` without a copy per value."""

    # No separate index on article_id: the primary key (article_id, position) starts with it.
    article = peewee.ForeignKeyField(Article, on_delete="CASCADE", column_name="article_id", index=False)
    position = peewee.IntegerField()
    heading = Utf8TextField()
    content = LongTextField()
    token_count = peewee.IntegerField()
    vector = peewee.BlobField()

    class Meta:
        table_name = "article_chunks"
        primary_key = peewee.CompositeKey("article", "position")


MODELS = (*MODELS, ArticleEmbedding, ArticleChunk)
