package limits

// The bounds of one statistics request: QueryDataStatistics over SOAP, a query with
// outStatistics over REST. They are fixed, refused as Statistics, and checked by the operation
// (internal/mapserver/queries) so that both front ends have them; docs/limits.md says why they
// have their values. Together they bound the answer before any row is read: at most
// MaxStatisticsValues values, each named by at most MaxStatisticNameBytes bytes.
const (
	// MaxStatistics is the most statistics (StatisticDescriptions, outStatistics) of one request.
	MaxStatistics = 100
	// MaxGroupByFields is the most fields one request groups by.
	MaxGroupByFields = 10
	// MaxStatisticsGroups is the most groups (records of the answer) one request may make.
	MaxStatisticsGroups = 10_000
	// MaxStatisticsValues bounds groups × (group fields + statistics): the values of the answer.
	// With many columns it allows fewer groups than MaxStatisticsGroups.
	MaxStatisticsValues = 100_000
	// MaxStatisticNameBytes is the longest name of a statistic's result field
	// (ResultFieldName, outStatisticFieldName): each record of the answer repeats it.
	MaxStatisticNameBytes = 128
)
