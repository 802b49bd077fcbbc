"""Timeline thumbnails: one JPEG sprite of evenly spaced exact frames, plus its meta."""

from __future__ import annotations

from pathlib import Path

from PIL import Image

from annotator.base.media.frames import FrameReader
from annotator.base.media.frametable import FrameTable

THUMB_COUNT = 100
THUMB_WIDTH = 160
THUMB_COLUMNS = 10


def thumbnail_indices(frame_count: int, count: int = THUMB_COUNT) -> list[int]:
    """``count`` frame indices spread evenly from the first frame to the last."""
    if frame_count <= 0:
        return []
    count = min(count, frame_count)
    if count == 1:
        return [0]
    return sorted({round(i * (frame_count - 1) / (count - 1)) for i in range(count)})


def keyframe_thumbnail_indices(table: FrameTable, count: int = THUMB_COUNT) -> list[int]:
    """The keyframes at or before ``count`` evenly spaced frames (distinct, in order).

    For a rendition with long GOPs (a remux of the source): each tile then costs one
    decoded frame instead of up to a GOP of them, so the sprite takes a fraction of the time.
    """
    return sorted({table.keyframe_at_or_before(i) for i in thumbnail_indices(table.frame_count, count)})


def make_thumbnails(
    proxy: str | Path,
    table: FrameTable,
    dest: str | Path,
    *,
    count: int = THUMB_COUNT,
    tile_width: int = THUMB_WIDTH,
    columns: int = THUMB_COLUMNS,
    indices: list[int] | None = None,
) -> dict:
    """Write the sprite ``dest`` (JPEG) and return its meta.

    Meta: ``tile_width``, ``tile_height``, ``columns``, ``rows``, ``count`` and, per tile
    in sprite order (left to right, top to bottom), ``frames`` (index) and ``times``
    (pts in seconds), so a timeline can place tile *k* at ``times[k]``.
    """
    if indices is None:
        indices = thumbnail_indices(table.frame_count, count)
    tiles = []
    with FrameReader(proxy, table) as reader:
        for index in indices:
            image = reader.frame(index).to_image()
            tile_height = max(2, round(image.height * tile_width / image.width))
            tiles.append(image.resize((tile_width, tile_height), Image.Resampling.BILINEAR))
    tile_height = tiles[0].height
    columns = min(columns, len(tiles))
    rows = -(-len(tiles) // columns)
    sprite = Image.new("RGB", (columns * tile_width, rows * tile_height))
    for k, tile in enumerate(tiles):
        sprite.paste(tile, ((k % columns) * tile_width, (k // columns) * tile_height))
    sprite.save(dest, format="JPEG", quality=80)
    return {
        "version": 1,
        "tile_width": tile_width,
        "tile_height": tile_height,
        "columns": columns,
        "rows": rows,
        "count": len(tiles),
        "frames": indices,
        "times": [table.seconds(i) for i in indices],
    }
