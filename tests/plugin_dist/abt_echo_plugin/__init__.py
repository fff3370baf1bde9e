"""An abt plugin: the ``echo`` provider type and the ``memo`` trace format."""
